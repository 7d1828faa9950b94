//! `Workspaces`: one session = its git clone + its container, made in one call, found again
//! from any process, stopped, destroyed (clone to trash), and handed out as FileIO + Shell.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::host_paths::engine_sockets;
use super::idle_tracker::{IdleTracker, SessionUseHook};
use super::session_container::SessionContainer;
use super::session_settings::SessionSettings;
use super::settings_resolution::{plain_settings, resolve_settings, SettingsRequest};
use super::trust::Trust;
use super::workspace_record::{self as record, WorkspaceRecord};
use crate::clone::{branch_name, validate_session_id, CloneManager};
use crate::container_environment::{
    container_environment, ContainerEnvironment, EnvironmentRequest,
};
use crate::devcontainer::{
    read_devcontainer_config_with, HostEnv, ReadOptions, DEFAULT_WORKSPACE_FOLDER,
};
use crate::engine::{Engine, EngineOptions};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::{ContainerRuntime, ContainerUse, DockerRuntime, Lifetime, RuntimeOptions};

#[derive(Debug, Clone, Default)]
pub struct WorkspacesOptions {
    pub base_dir: PathBuf,
    pub engine: EngineOptions,
    pub image: Option<String>,
    /// What a session's devcontainer.json may reach beyond the session, unless `create`
    /// gives its own.
    pub trust: Trust,
    /// Stop a session's container after this long without a FileIO/Shell use.
    pub idle_timeout: Option<Duration>,
    /// Use each session's agent for its commands and file operations.
    pub agent: bool,
}

#[derive(Debug, Clone, Default)]
pub struct CreateWorkspace {
    pub project_dir: String,
    pub session_id: String,
    pub image: Option<String>,
    pub devcontainer: bool,
    pub env: BTreeMap<String, String>,
    pub network: Option<String>,
    pub lifetime: Lifetime,
    /// Replaces the constructor's trust for this session.
    pub trust: Option<Trust>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceInfo {
    pub record: WorkspaceRecord,
    /// A container state, or `missing`.
    pub state: String,
}

/// FileIO and Shell bound to a session's container, as its `remoteUser` in its
/// `workspaceFolder`, with its `remoteEnv`.
pub type WorkspaceEnvironment = ContainerEnvironment;

pub struct Workspaces {
    options: WorkspacesOptions,
    runtime: DockerRuntime,
    clones: Arc<CloneManager>,
    /// One create/start at a time per session in this process.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    idle: Option<Arc<IdleTracker>>,
}

fn blocking_error(e: tokio::task::JoinError) -> Error {
    Error::new(
        ErrorCode::EngineError,
        format!("background task failed: {e}"),
    )
}

impl Workspaces {
    pub fn new(options: WorkspacesOptions) -> Workspaces {
        let runtime = DockerRuntime::new(RuntimeOptions {
            engine: options.engine.clone(),
            image: options.image.clone(),
            base_dir: Some(options.base_dir.to_string_lossy().into_owned()),
            agent: options.agent,
        });
        let clones = Arc::new(CloneManager::new(options.base_dir.clone()));
        let idle = options.idle_timeout.map(|t| Arc::new(IdleTracker::new(t)));
        Workspaces {
            options,
            runtime,
            clones,
            locks: Mutex::new(HashMap::new()),
            idle,
        }
    }

    pub fn runtime(&self) -> &DockerRuntime {
        &self.runtime
    }

    fn lock_for(&self, session_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.locks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(session_id.to_string())
            .or_default()
            .clone()
    }

    /// Deterministic per base directory and session, so that two processes creating the same
    /// workspace meet on one container name.
    fn container_name(&self, session_id: &str) -> String {
        let base = Sha256::digest(self.options.base_dir.to_string_lossy().as_bytes());
        format!("ws-{session_id}-{}", &hex::encode(base)[..8])
    }

    async fn state_of(&self, container: &str) -> Result<String> {
        match self.runtime.inspect(container).await {
            Ok(info) => Ok(info.state.as_str().to_string()),
            Err(err) if err.code == ErrorCode::ContainerNotFound => Ok("missing".into()),
            Err(err) => Err(err),
        }
    }

    pub async fn get(&self, session_id: &str) -> Result<Option<WorkspaceInfo>> {
        validate_session_id(session_id)?;
        let Some(record) = record::load(&self.options.base_dir, session_id)? else {
            return Ok(None);
        };
        let state = self.state_of(&record.container_id).await?;
        Ok(Some(WorkspaceInfo { record, state }))
    }

    pub async fn list(&self) -> Result<Vec<WorkspaceInfo>> {
        let mut all = Vec::new();
        for id in record::session_ids(&self.options.base_dir)? {
            if let Some(info) = self.get(&id).await? {
                all.push(info);
            }
        }
        Ok(all)
    }

    /// Idempotent per session: an existing workspace is started if stopped, and its
    /// container recreated, with the settings it was created with, if it was removed.
    pub async fn create(self: &Arc<Self>, request: CreateWorkspace) -> Result<WorkspaceInfo> {
        validate_session_id(&request.session_id)?;
        if let Some(idle) = &self.idle {
            idle.touch(&request.session_id);
            idle.ensure_running(Arc::downgrade(self));
        }
        let lock = self.lock_for(&request.session_id);
        let _guard = lock.lock().await;
        let base = &self.options.base_dir;
        if let Some(existing) = record::load(base, &request.session_id)? {
            if self.state_of(&existing.container_id).await? == "missing" {
                return self.recreate(existing).await;
            }
            self.ensure_started(&existing).await?;
            return self.info(existing).await;
        }
        let project = std::fs::canonicalize(&request.project_dir).map_err(|e| {
            Error::new(
                ErrorCode::Enoent,
                format!("project {}: {e}", request.project_dir),
            )
        })?;
        let clones = self.clones.clone();
        let (project_for_clone, id) = (project.clone(), request.session_id.clone());
        let clone_path = tokio::task::spawn_blocking(move || {
            clones.create_session_clone(&project_for_clone, &id)
        })
        .await
        .map_err(blocking_error)??;
        let engine = self.runtime.engine().await?;
        let trust = request.trust.as_ref().unwrap_or(&self.options.trust);
        let settings = self
            .resolve(&engine, &request, &project, &clone_path, trust)
            .await?;
        let record = WorkspaceRecord {
            session_id: request.session_id.clone(),
            project_dir: project.to_string_lossy().into_owned(),
            clone_path: clone_path.to_string_lossy().into_owned(),
            branch_name: branch_name(&request.session_id),
            container_id: self.container_name(&request.session_id),
            container_mount_path: settings.mount_path.clone(),
            image: settings.image.name().to_string(),
            lifetime: request.lifetime.as_str().to_string(),
            devcontainer: settings.config_path.is_some(),
            created_at_ms: chrono::Utc::now().timestamp_millis(),
            settings: Some(settings),
            owner: record::owner_for(request.lifetime),
        };
        self.session_container(&engine, &record)?
            .create(request.lifetime, true)
            .await?;
        record::save(base, &record)?;
        self.info(record).await
    }

    /// The settings of a new session: the project's devcontainer.json (read from the
    /// project, which the agent cannot write) checked against `trust`, or the plain ones.
    async fn resolve(
        &self,
        engine: &Engine,
        request: &CreateWorkspace,
        project: &Path,
        clone: &Path,
        trust: &Trust,
    ) -> Result<SessionSettings> {
        let config = if request.devcontainer {
            let (at, local_folder, allowed) = (
                project.to_path_buf(),
                clone.to_path_buf(),
                trust.local_env.clone(),
            );
            tokio::task::spawn_blocking(move || {
                let host_env = HostEnv::only(std::env::vars().collect(), &allowed);
                read_devcontainer_config_with(
                    &at,
                    ReadOptions {
                        local_folder: Some(local_folder),
                        host_env,
                    },
                )
            })
            .await
            .map_err(blocking_error)??
        } else {
            None
        };
        let sockets = engine_sockets(engine);
        let settings_request = SettingsRequest {
            project,
            clone,
            image: request.image.as_deref(),
            default_image: self.options.image.as_deref(),
            env: &request.env,
            network: request.network.as_deref(),
            trust,
            engine_sockets: &sockets,
            session_id: &request.session_id,
            mount_path: DEFAULT_WORKSPACE_FOLDER,
        };
        match &config {
            Some(config) => resolve_settings(&settings_request, config),
            None => plain_settings(&settings_request),
        }
    }

    /// A new container for a session whose container was removed: the stored settings
    /// (a record from before settings were kept gets them resolved from the project).
    async fn recreate(&self, mut existing: WorkspaceRecord) -> Result<WorkspaceInfo> {
        let engine = self.runtime.engine().await?;
        if existing.settings.is_none() {
            let request = CreateWorkspace {
                project_dir: existing.project_dir.clone(),
                session_id: existing.session_id.clone(),
                image: Some(existing.image.clone()).filter(|_| !existing.devcontainer),
                devcontainer: existing.devcontainer,
                ..Default::default()
            };
            let (project, clone) = (
                PathBuf::from(&existing.project_dir),
                PathBuf::from(&existing.clone_path),
            );
            let settings = self
                .resolve(&engine, &request, &project, &clone, &self.options.trust)
                .await?;
            existing.settings = Some(settings);
        }
        let lifetime = Lifetime::parse(&existing.lifetime).unwrap_or_default();
        self.session_container(&engine, &existing)?
            .create(lifetime, false)
            .await?;
        record::save(&self.options.base_dir, &existing)?;
        self.info(existing).await
    }

    fn session_container<'a>(
        &'a self,
        engine: &'a Engine,
        record: &'a WorkspaceRecord,
    ) -> Result<SessionContainer<'a>> {
        let settings = record.settings.as_ref().ok_or_else(|| {
            Error::invalid_argument(format!(
                "workspace '{}' has no stored settings",
                record.session_id
            ))
        })?;
        Ok(SessionContainer {
            runtime: &self.runtime,
            engine,
            record,
            settings,
        })
    }

    /// Starts a stopped workspace container, its mounts checked and `postStartCommand`
    /// run as a start does.
    async fn ensure_started(&self, record: &WorkspaceRecord) -> Result<()> {
        let engine = self.runtime.engine().await?;
        match record.settings {
            Some(_) => self.session_container(&engine, record)?.start().await,
            // A record from before settings were kept: started as it is, nothing run.
            None => self.runtime.start(&record.container_id).await,
        }
    }

    async fn info(&self, record: WorkspaceRecord) -> Result<WorkspaceInfo> {
        let state = self.state_of(&record.container_id).await?;
        Ok(WorkspaceInfo { record, state })
    }

    fn required(&self, session_id: &str) -> Result<WorkspaceRecord> {
        validate_session_id(session_id)?;
        record::load(&self.options.base_dir, session_id)?.ok_or_else(|| {
            Error::new(
                ErrorCode::ContainerNotFound,
                format!("no workspace for session '{session_id}'"),
            )
        })
    }

    /// Stops the container; the clone and the workspace stay.
    pub async fn stop(&self, session_id: &str) -> Result<()> {
        let record = self.required(session_id)?;
        match self.runtime.stop(&record.container_id, None).await {
            Err(err) if err.code == ErrorCode::ContainerNotFound => Ok(()),
            other => other,
        }
    }

    /// Stops an idle session's container, under the session's lock so that a start for a
    /// use waits for it.
    pub async fn idle_stop(&self, session_id: &str) -> Result<()> {
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        self.stop(session_id).await
    }

    /// Starts a session's container again (after an idle stop), with `postStartCommand`.
    pub async fn start_session(&self, session_id: &str) -> Result<()> {
        let record = self.required(session_id)?;
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        self.ensure_started(&record).await
    }

    /// Removes the container and moves the clone (with its branch and commits) to trash.
    pub async fn destroy(&self, session_id: &str) -> Result<()> {
        let record = self.required(session_id)?;
        if let Some(idle) = &self.idle {
            idle.forget(session_id);
        }
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        match self.runtime.remove(&record.container_id).await {
            Err(err) if err.code != ErrorCode::ContainerNotFound => return Err(err),
            _ => {}
        }
        let clones = self.clones.clone();
        let id = session_id.to_string();
        tokio::task::spawn_blocking(move || clones.remove_session_clone(&id))
            .await
            .map_err(blocking_error)??;
        record::remove(&self.options.base_dir, session_id)
    }

    /// FileIO and Shell bound to the session's container, in its mount path; the container is
    /// started first if it was stopped.
    pub async fn environment(
        self: &Arc<Self>,
        session_id: &str,
        thread_id: &str,
    ) -> Result<WorkspaceEnvironment> {
        let record = self.required(session_id)?;
        self.start_session(session_id).await?;
        let usage: Option<Arc<dyn ContainerUse>> = self.idle.as_ref().map(|idle| {
            idle.touch(session_id);
            idle.ensure_running(Arc::downgrade(self));
            Arc::new(SessionUseHook {
                tracker: idle.clone(),
                workspaces: Arc::downgrade(self),
                session: session_id.to_string(),
            }) as Arc<dyn ContainerUse>
        });
        let settings = record.settings.as_ref();
        container_environment(EnvironmentRequest {
            container: record.container_id.clone(),
            cwd: Some(
                settings
                    .map(|s| s.workspace_folder.clone())
                    .unwrap_or_else(|| record.container_mount_path.clone()),
            ),
            thread_id: thread_id.to_string(),
            user: settings.and_then(|s| s.remote_user()).map(str::to_string),
            env: settings.map(|s| s.remote_env.clone()).unwrap_or_default(),
            engine: self.options.engine.clone(),
            agent: self.options.agent,
            usage,
        })
        .await
    }
}
