//! `PodWorkspaces`: the session layer on a cluster. A session is its clone on the host,
//! its record (`${baseDir}/kubernetes/workspaces/<id>.json`, as the engines' records) and its
//! Pod; the host clone is the lasting copy, the Pod's workspace folder the working one.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::pod_pool::PodMembers;
use super::pod_settings::{devcontainer_settings, session_record};
use crate::clone::{validate_session_id, CloneManager};
use crate::container_environment::ShellSettings;
use crate::container_runtime::ContainerRuntime;
use crate::delivery;
use crate::devcontainer::find_config;
use crate::egress::{Egress, SessionEgress, SessionForwards};
use crate::error::{Error, ErrorCode, Result};
use crate::kubernetes::{
    pod_environment, KubernetesRuntime, KubernetesRuntimeOptions, PodEnvironment,
    PodEnvironmentRequest,
};
use crate::progress::{Phase, Progress, ProgressTarget};
use crate::runtime::{Lifetime, ResourceLimits, UseGuard};
use crate::session_settings::{ProbeCache, Trust};
use crate::terminal::{TerminalInput, TerminalOutput, TerminalRequest};
use crate::warm_pool::{PoolKey, PoolOptions, WarmPool};
use crate::workspace::{
    load_record, remove_record, session_ids, IdleTracker, WorkspaceInfo, WorkspaceRecord,
    KEEP_CHECKPOINTS,
};

#[derive(Debug, Clone, Default)]
pub struct PodWorkspacesOptions {
    /// The library's folder; sessions on a cluster keep theirs under `kubernetes/` in it.
    pub base_dir: PathBuf,
    /// The cluster, the default image, the pull policy, the agent.
    pub runtime: KubernetesRuntimeOptions,
    /// The egress of sessions created without one (default `'public'`, as on the engines).
    pub egress: Egress,
    /// The limits of new sessions, under create's own (field by field).
    pub resources: ResourceLimits,
    /// A session unused this long has its work read back and its Pod stopped; its next use
    /// starts it again.
    pub idle_timeout: Option<Duration>,
    /// Where sessions' creation progress goes, unless `create` gives its own.
    pub progress: Option<ProgressTarget>,
    /// Checkpoints kept per session (the oldest dropped past it); default `KEEP_CHECKPOINTS`.
    pub max_checkpoints: Option<usize>,
    /// What a session's devcontainer.json may reach beyond the session, unless `create`
    /// gives its own (default: nothing).
    pub trust: Trust,
    /// Pods made ahead for the settings of the latest session.
    pub pool: Option<PoolOptions>,
}

#[derive(Debug, Clone, Default)]
pub struct CreatePodWorkspace {
    pub project_dir: String,
    pub session_id: String,
    pub start_ref: Option<String>,
    pub image: Option<String>,
    /// Honour the project's devcontainer.json (what a cluster cannot give is refused).
    pub devcontainer: bool,
    /// Replaces the constructor's trust for this session.
    pub trust: Option<Trust>,
    pub env: BTreeMap<String, String>,
    pub lifetime: Lifetime,
    pub resources: ResourceLimits,
    /// The session's egress; the constructor's when `None`.
    pub egress: Option<Egress>,
    /// Replaces the constructor's progress target for this call.
    pub progress: Option<ProgressTarget>,
}

pub struct PodWorkspaces {
    pub(super) base: PathBuf,
    image: Option<String>,
    pub(super) runtime: Arc<KubernetesRuntime>,
    pub(super) egress: Egress,
    resources: ResourceLimits,
    progress: Option<ProgressTarget>,
    pub(super) max_checkpoints: usize,
    trust: Trust,
    /// The Pods' environments as read in each start, for devcontainer sessions.
    pub(super) probes: ProbeCache,
    pub(super) pool: Option<WarmPool<PodMembers>>,
    /// Egress set by this process, with its callbacks, by session.
    pub(super) egress_set: SessionEgress,
    /// The ports this process serves for its sessions.
    pub(super) forwards: SessionForwards,
    /// Each session's last use, where idle sessions stop.
    pub(super) idle: Option<Arc<IdleTracker>>,
    pub(super) clones: Arc<CloneManager>,
    /// One create, start, read-back or removal at a time per session in this process.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

pub(super) fn blocking_error(err: tokio::task::JoinError) -> Error {
    Error::new(ErrorCode::EngineError, format!("blocking task: {err}"))
}

impl PodWorkspaces {
    pub fn new(options: PodWorkspacesOptions) -> PodWorkspaces {
        let base = options.base_dir.join("kubernetes");
        let mut runtime = options.runtime;
        let image = runtime.image.clone().filter(|i| !i.is_empty());
        runtime.base_dir = Some(base.to_string_lossy().into_owned());
        let runtime = Arc::new(KubernetesRuntime::new(runtime));
        let pool = options.pool.map(|pool| {
            let tag = PoolKey::of(&[&base.to_string_lossy()]).as_str()[..8].to_string();
            let members = PodMembers {
                runtime: runtime.clone(),
            };
            WarmPool::new(pool, &base, &tag, members)
        });
        PodWorkspaces {
            clones: Arc::new(CloneManager::new(base.clone())),
            runtime,
            pool,
            image,
            base,
            egress: options.egress,
            resources: options.resources,
            progress: options.progress,
            max_checkpoints: options.max_checkpoints.unwrap_or(KEEP_CHECKPOINTS),
            trust: options.trust,
            probes: ProbeCache::default(),
            egress_set: SessionEgress::default(),
            forwards: SessionForwards::default(),
            idle: options.idle_timeout.map(|t| Arc::new(IdleTracker::new(t))),
            locks: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn lock_for(&self, session_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        locks.entry(session_id.to_string()).or_default().clone()
    }

    pub(super) fn required(&self, session_id: &str) -> Result<WorkspaceRecord> {
        validate_session_id(session_id)?;
        load_record(&self.base, session_id)?.ok_or_else(|| {
            Error::new(
                ErrorCode::ContainerNotFound,
                format!("no workspace for session '{session_id}'"),
            )
        })
    }

    /// The Pod's state, or `missing`.
    pub(super) async fn state_of(&self, pod: &str) -> Result<String> {
        match self.runtime.inspect(pod).await {
            Ok(info) => Ok(info.state.as_str().to_string()),
            Err(err) if err.code == ErrorCode::ContainerNotFound => Ok("missing".into()),
            Err(err) => Err(err),
        }
    }

    pub(super) async fn info(&self, record: WorkspaceRecord) -> Result<WorkspaceInfo> {
        let state = self.state_of(&record.container_id).await?;
        let ports = self.forwards.listed(&record.session_id);
        Ok(WorkspaceInfo {
            record,
            state,
            ports,
        })
    }

    /// Moves a session's clone to the trash (a creation that failed).
    async fn drop_clone(&self, session_id: &str) {
        let (clones, id) = (self.clones.clone(), session_id.to_string());
        let _ = tokio::task::spawn_blocking(move || clones.remove_session_clone(&id)).await;
    }

    /// Clone and Pod for a session, the clone copied in; idempotent per session id (an
    /// existing session's Pod is started, or made again, and given the clone).
    pub async fn create(self: &Arc<Self>, request: CreatePodWorkspace) -> Result<WorkspaceInfo> {
        validate_session_id(&request.session_id)?;
        request.resources.validate("resources")?;
        let _creating = self.pool_pause();
        self.mark_used(&request.session_id);
        let resources = request.resources.over(self.resources);
        let lock = self.lock_for(&request.session_id);
        let _guard = lock.lock().await;
        if let Some(existing) = load_record(&self.base, &request.session_id)? {
            self.ensure_running(&existing).await?;
            return self.info(existing).await;
        }
        if let Some(text) = &request.start_ref {
            delivery::validate_ref(text)?;
        }
        let egress = self.egress_for_new(request.egress.clone())?;
        let project = PathBuf::from(&request.project_dir);
        let image = request.image.clone().or_else(|| self.image.clone());
        let image = image.filter(|i| !i.is_empty());
        if image.is_none() && !(request.devcontainer && find_config(&project).is_some()) {
            return Err(Error::invalid_argument(
                "a session on Kubernetes needs an image (create's `image`, the constructor's, or devcontainer.json's)",
            ));
        }
        let (clones, id, start) = (
            self.clones.clone(),
            request.session_id.clone(),
            request.start_ref.clone(),
        );
        let at = project.clone();
        let (clone_path, start_commit) = tokio::task::spawn_blocking(move || {
            clones.create_session_clone_at(&at, &id, start.as_deref())
        })
        .await
        .map_err(blocking_error)??;
        let trust = request.trust.as_ref().unwrap_or(&self.trust);
        let settings = match devcontainer_settings(
            &request,
            self.image.as_deref(),
            trust,
            &clone_path,
        )
        .await
        {
            Ok(settings) => settings,
            Err(err) => {
                self.drop_clone(&request.session_id).await;
                return Err(err);
            }
        };
        let mut record = WorkspaceRecord {
            pod_resources: resources,
            pod_egress: Some(egress.spec.clone()),
            ..session_record(
                &request,
                &self.base,
                (clone_path, start_commit),
                image,
                settings,
            )
        };
        self.egress_set.remember(&record.session_id, egress);
        let progress = request
            .progress
            .as_ref()
            .or(self.progress.as_ref())
            .map_or_else(Progress::none, |p| p.for_session(&record.session_id));
        if let Err(err) = self.bring_up_pooled(&mut record, &progress).await {
            let _ = self.runtime.remove(&record.container_id).await;
            self.drop_clone(&record.session_id).await;
            return Err(err);
        }
        let ready = format!("Pod {} ready", record.container_id);
        progress.step(Phase::Create, &ready);
        crate::workspace::save_record(&self.base, &record)?;
        // The idle clock starts when the session is ready, not when its create began.
        self.mark_used(&record.session_id);
        // Running: it was brought up just now.
        let ports = self.forwards.listed(&record.session_id);
        Ok(WorkspaceInfo {
            record,
            state: "running".to_string(),
            ports,
        })
    }

    pub async fn get(&self, session_id: &str) -> Result<Option<WorkspaceInfo>> {
        validate_session_id(session_id)?;
        match load_record(&self.base, session_id)? {
            Some(record) => self.info(record).await.map(Some),
            None => Ok(None),
        }
    }

    pub async fn list(&self) -> Result<Vec<WorkspaceInfo>> {
        let mut all = Vec::new();
        for id in session_ids(&self.base)? {
            if let Some(record) = load_record(&self.base, &id)? {
                all.push(self.info(record).await?);
            }
        }
        Ok(all)
    }

    /// FileIO and Shell in the session's Pod (started if stopped), in its workspace folder,
    /// as its remote user with its remote environment (`postAttachCommand` run first).
    pub async fn environment(
        self: &Arc<Self>,
        session_id: &str,
        thread_id: &str,
        shell: ShellSettings,
    ) -> Result<PodEnvironment> {
        let record = self.required(session_id)?;
        {
            let lock = self.lock_for(session_id);
            let _guard = lock.lock().await;
            self.ensure_running(&record).await?;
        }
        let mut request = PodEnvironmentRequest {
            pod: record.container_id.clone(),
            cwd: Some(record.container_mount_path.clone()),
            thread_id: thread_id.to_string(),
            user: None,
            env: BTreeMap::new(),
            replace_env: false,
            shell,
            usage: self.use_hook(session_id),
        };
        if let Some(settings) = &record.settings {
            self.run_attach_step(&record).await?;
            let env = self.remote_env(&record, settings).await?;
            request.cwd = Some(settings.workspace_folder.clone());
            request.user = settings.remote_user().map(str::to_string);
            (request.env, request.replace_env) = (env.env, env.replace);
        }
        pod_environment(self.runtime.clone(), request).await
    }

    /// A terminal in the session's Pod, where and as its commands run (through its agent).
    pub async fn terminal(
        self: &Arc<Self>,
        session_id: &str,
        request: TerminalRequest,
    ) -> Result<(TerminalInput, TerminalOutput, UseGuard)> {
        let env = self
            .environment(session_id, "terminal", ShellSettings::default())
            .await?;
        env.shell.open_terminal(request).await
    }

    /// The record, its Pod's workspace read back first.
    pub(super) async fn read_session(&self, session_id: &str) -> Result<WorkspaceRecord> {
        let record = self.required(session_id)?;
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        self.read_back_running(&record).await?;
        Ok(record)
    }

    /// Reads the work back, then stops the Pod (its next start begins from the clone).
    pub async fn stop(&self, session_id: &str) -> Result<()> {
        let record = self.required(session_id)?;
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        self.read_back_running(&record).await?;
        self.forwards.close(session_id);
        match self.runtime.stop(&record.container_id, None).await {
            Err(err) if err.code != ErrorCode::ContainerNotFound => Err(err),
            _ => Ok(()),
        }
    }

    /// Reads the work back where it can, removes the Pod, moves the clone to the trash and
    /// forgets the session.
    pub async fn destroy(&self, session_id: &str) -> Result<()> {
        let record = self.required(session_id)?;
        if let Some(idle) = &self.idle {
            idle.forget(session_id);
        }
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        if let Err(err) = self.read_back_running(&record).await {
            tracing::warn!("session '{session_id}': its last work was not read back: {err}");
        }
        self.forwards.close(session_id);
        self.egress_set.forget(session_id);
        match self.runtime.remove(&record.container_id).await {
            Err(err) if err.code != ErrorCode::ContainerNotFound => return Err(err),
            _ => {}
        }
        let (clones, id) = (self.clones.clone(), session_id.to_string());
        tokio::task::spawn_blocking(move || clones.remove_session_clone(&id))
            .await
            .map_err(blocking_error)??;
        self.trash_checkpoints(session_id).await?;
        remove_record(&self.base, session_id)
    }
}
