//! `Workspaces`: one session = its git clone + its container, made in one call, found again
//! from any process, stopped, destroyed (clone to trash), and handed out as FileIO + Shell.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::idle_tracker::{IdleOwner, IdleTracker, SessionUseHook};
use super::plain_folder::PlainFolder;
use super::pool_members::SessionMembers;
use super::session_container::SessionContainer;
use super::workspace_record::{self as record, WorkspaceRecord};
use super::workspace_storage::StorageChoice;
use crate::agent::{agent_access, AgentAccess};
use crate::clone::{validate_session_id, CloneManager};
use crate::container_environment::{
    container_environment, ContainerEnvironment, EnvironmentRequest, ShellSettings,
};
use crate::container_runtime::{ContainerRuntime, DockerRuntime, RuntimeOptions};
use crate::egress::{Egress, SessionEgress, SessionForwards};
use crate::engine::{Engine, EngineOptions, PullPolicy};
use crate::error::{Error, ErrorCode, Result};
use crate::progress::ProgressTarget;
use crate::runtime::pool_member::SESSION_PREFIX;
use crate::runtime::{ContainerUse, Lifetime, ResourceLimits, UseGuard};
use crate::session_images::{prune_images, ImageSupply, PruneReport, PruneRequest};
use crate::session_settings::{ProbeCache, Trust};
use crate::terminal::{TerminalInput, TerminalOutput, TerminalRequest};
use crate::warm_pool::{PoolOptions, WarmPool};

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
    /// Where sessions may connect, unless `create` gives its own.
    pub egress: Egress,
    /// Every session's limits, under its own (a default pids limit applies when none).
    pub resources: ResourceLimits,
    /// When images are pulled, unless `create` says.
    pub pull: PullPolicy,
    /// Where sessions' creation progress goes, unless `create` gives its own.
    pub progress: Option<ProgressTarget>,
    /// Where new sessions' repositories live for their containers.
    pub storage: StorageChoice,
    /// Keep this many containers ready for the settings of the latest session.
    pub pool: Option<PoolOptions>,
    /// Checkpoints a session keeps (the oldest dropped first); `KEEP_CHECKPOINTS` when `None`.
    pub max_checkpoints: Option<usize>,
}

#[derive(Debug, Clone, Default)]
pub struct CreateWorkspace {
    pub project_dir: String,
    pub session_id: String,
    /// Where the session branch starts: a branch, tag or commit of the project (default
    /// its HEAD).
    pub start_ref: Option<String>,
    /// A remote to clone on the host instead of a local project (`project_dir` empty).
    pub repository: Option<crate::git_transport::Transfer>,
    /// What a `project_dir` without a commit to clone becomes.
    pub plain_folder: PlainFolder,
    pub image: Option<String>,
    pub devcontainer: bool,
    pub env: BTreeMap<String, String>,
    pub network: Option<String>,
    pub lifetime: Lifetime,
    /// Replaces the constructor's trust for this session.
    pub trust: Option<Trust>,
    /// Replaces the constructor's egress for this session.
    pub egress: Option<Egress>,
    /// Over the constructor's `resources`, field by field.
    pub resources: ResourceLimits,
    /// Replaces the constructor's pull policy for this call.
    pub pull: Option<PullPolicy>,
    /// Replaces the constructor's progress target for this call.
    pub progress: Option<ProgressTarget>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceInfo {
    pub record: WorkspaceRecord,
    /// A container state, or `missing`.
    pub state: String,
    /// Container ports this process serves on the host: (container port, host address).
    pub ports: Vec<(u16, std::net::SocketAddr)>,
}

/// FileIO and Shell bound to a session's container, as its `remoteUser` in its
/// `workspaceFolder`, with its `remoteEnv`.
pub type WorkspaceEnvironment = ContainerEnvironment;

pub struct Workspaces {
    pub(super) options: WorkspacesOptions,
    pub(super) runtime: DockerRuntime,
    pub(super) clones: Arc<CloneManager>,
    /// One create/start at a time per session in this process.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    pub(super) idle: Option<Arc<IdleTracker>>,
    pub(super) probes: ProbeCache,
    /// Each session's egress as this process last set it (with its callbacks).
    pub(super) egress: SessionEgress,
    pub(super) forwards: SessionForwards,
    pub(super) pool: Option<WarmPool<SessionMembers>>,
}

/// The tag of a base directory in its container names.
fn base_tag(base_dir: &std::path::Path) -> String {
    let digest = Sha256::digest(base_dir.to_string_lossy().as_bytes());
    hex::encode(digest)[..8].to_string()
}

pub(super) fn blocking_error(e: tokio::task::JoinError) -> Error {
    Error::new(
        ErrorCode::EngineError,
        format!("background task failed: {e}"),
    )
}

impl Workspaces {
    pub fn new(options: WorkspacesOptions) -> Workspaces {
        let runtime_options = RuntimeOptions {
            engine: options.engine.clone(),
            image: options.image.clone(),
            base_dir: Some(options.base_dir.to_string_lossy().into_owned()),
            agent: options.agent,
            pull: options.pull,
        };
        let pool = options.pool.map(|pool| {
            let base = &options.base_dir;
            let members = SessionMembers::new(runtime_options.clone(), base);
            WarmPool::new(pool, base, &base_tag(base), members)
        });
        let runtime = DockerRuntime::new(runtime_options);
        let clones = Arc::new(CloneManager::new(options.base_dir.clone()));
        let idle = options.idle_timeout.map(|t| Arc::new(IdleTracker::new(t)));
        Workspaces {
            options,
            runtime,
            clones,
            locks: Mutex::new(HashMap::new()),
            idle,
            probes: ProbeCache::default(),
            egress: SessionEgress::default(),
            forwards: SessionForwards::default(),
            pool,
        }
    }

    pub fn runtime(&self) -> &DockerRuntime {
        &self.runtime
    }

    /// Removes the derived images of this base directory no container uses.
    pub async fn prune(&self, request: PruneRequest) -> Result<PruneReport> {
        let engine = self.runtime.engine().await?;
        let base_dir = self.options.base_dir.to_string_lossy();
        prune_images(&engine, &base_dir, request).await
    }

    pub(super) fn lock_for(&self, session_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.locks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(session_id.to_string())
            .or_default()
            .clone()
    }

    /// Deterministic per base directory and session, so that two processes creating the same
    /// workspace meet on one container name.
    pub(super) fn container_name(&self, session_id: &str) -> String {
        let tag = base_tag(&self.options.base_dir);
        format!("{SESSION_PREFIX}{session_id}-{tag}")
    }

    pub(super) async fn state_of(&self, container: &str) -> Result<String> {
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
        let ports = self.forwarded(session_id);
        Ok(Some(WorkspaceInfo {
            record,
            state,
            ports,
        }))
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

    /// How this call brings in a session's images: its pull policy and progress, else the
    /// constructor's.
    pub(super) fn supply(
        &self,
        session_id: &str,
        pull: Option<PullPolicy>,
        progress: Option<&ProgressTarget>,
    ) -> ImageSupply {
        ImageSupply {
            pull: pull.unwrap_or(self.options.pull),
            progress: progress
                .or(self.options.progress.as_ref())
                .map(|t| t.for_session(session_id))
                .unwrap_or_default(),
            base_dir: self.options.base_dir.clone(),
        }
    }

    pub(super) fn session_container<'a>(
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
            probes: &self.probes,
            egress: self.egress_of(record),
            // Only `create` pulls and reports progress: it replaces this.
            supply: ImageSupply {
                pull: PullPolicy::Never,
                progress: crate::progress::Progress::none(),
                base_dir: self.options.base_dir.clone(),
            },
        })
    }

    /// Starts a stopped workspace container, its mounts checked and `postStartCommand`
    /// run as a start does.
    pub(super) async fn ensure_started(&self, record: &WorkspaceRecord) -> Result<()> {
        let engine = self.runtime.engine().await?;
        match record.settings {
            Some(_) => self.session_container(&engine, record)?.start().await?,
            // A record from before settings were kept: started as it is, nothing run.
            None => self.runtime.start(&record.container_id).await?,
        }
        self.attach_relay(record).await?;
        self.forward_configured(record).await
    }

    pub(super) async fn info(&self, record: WorkspaceRecord) -> Result<WorkspaceInfo> {
        let state = self.state_of(&record.container_id).await?;
        let ports = self.forwarded(&record.session_id);
        Ok(WorkspaceInfo {
            record,
            state,
            ports,
        })
    }

    pub(super) fn required(&self, session_id: &str) -> Result<WorkspaceRecord> {
        validate_session_id(session_id)?;
        record::load(&self.options.base_dir, session_id)?.ok_or_else(|| {
            Error::new(
                ErrorCode::ContainerNotFound,
                format!("no workspace for session '{session_id}'"),
            )
        })
    }

    /// Which way the session's commands and file operations take (see `agent_access`).
    pub async fn container_access(&self, session_id: &str) -> Result<AgentAccess> {
        let record = self.required(session_id)?;
        if !self.options.agent {
            return Ok(AgentAccess::Engine {
                why: "these workspaces were made with agent: false".into(),
            });
        }
        let engine = self.runtime.engine().await?;
        agent_access(&engine, &record.container_id).await
    }

    /// A terminal in the session's container, as the session's shell runs its commands
    /// (its folder, user and environment); held as a use of the session while open.
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

    /// FileIO and Shell bound to the session's container, in its mount path; the container is
    /// started first if it was stopped.
    pub async fn environment(
        self: &Arc<Self>,
        session_id: &str,
        thread_id: &str,
        shell: ShellSettings,
    ) -> Result<WorkspaceEnvironment> {
        let record = self.required(session_id)?;
        self.start_session(session_id).await?;
        let usage: Option<Arc<dyn ContainerUse>> = self.idle.as_ref().map(|idle| {
            idle.touch(session_id);
            let owner: Weak<dyn IdleOwner> = Arc::downgrade(self) as Weak<Workspaces>;
            idle.ensure_running(owner.clone());
            Arc::new(SessionUseHook {
                tracker: idle.clone(),
                owner,
                session: session_id.to_string(),
            }) as Arc<dyn ContainerUse>
        });
        let settings = record.settings.as_ref();
        let remote = match settings {
            Some(_) => {
                let engine = self.runtime.engine().await?;
                let env = self.session_container(&engine, &record)?.attach().await?;
                Some(env)
            }
            None => None,
        };
        container_environment(EnvironmentRequest {
            container: record.container_id.clone(),
            cwd: Some(
                settings
                    .map(|s| s.workspace_folder.clone())
                    .unwrap_or_else(|| record.container_mount_path.clone()),
            ),
            thread_id: thread_id.to_string(),
            user: settings.and_then(|s| s.remote_user()).map(str::to_string),
            env: remote.as_ref().map(|r| r.env.clone()).unwrap_or_default(),
            replace_env: remote.is_some_and(|r| r.replace),
            engine: self.options.engine.clone(),
            agent: self.options.agent,
            usage,
            shell,
        })
        .await
    }
}
