//! `Workspaces`: one session = its git clone + its container, made in one call, found again
//! from any process, stopped, destroyed (clone to trash), and handed out as FileIO + Shell.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::idle_tracker::{IdleTracker, SessionUseHook};
use super::image_build::build_image;
use super::lifecycle_runner::{run_on_host, InContainer};
use super::workspace_record::{self as record, WorkspaceRecord};
use crate::clone::{branch_name, validate_session_id, CloneManager};
use crate::devcontainer::{
    devcontainer_id, read_devcontainer_config, DevcontainerConfig, DEFAULT_WORKSPACE_FOLDER,
};
use crate::engine::{Engine, EngineOptions};
use crate::error::{Error, ErrorCode, Result};
use crate::fileio::{DockerFileIo, FileIoOptions};
use crate::runtime::{
    ContainerConfig, ContainerMount, ContainerRuntime, ContainerState, ContainerUse, DockerRuntime,
    Lifetime, RuntimeOptions,
};
use crate::shell::{default_log_dir, DockerShell, ShellOptions, DEFAULT_TIMEOUT};

#[derive(Debug, Clone, Default)]
pub struct WorkspacesOptions {
    pub base_dir: PathBuf,
    pub engine: EngineOptions,
    pub image: Option<String>,
    /// Run devcontainer.json's `initializeCommand` on the host and honour `privileged`.
    pub allow_host_commands: bool,
    /// Stop a session's container after this long without a FileIO/Shell use.
    pub idle_timeout: Option<Duration>,
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
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceInfo {
    pub record: WorkspaceRecord,
    /// A container state, or `missing`.
    pub state: String,
}

pub struct WorkspaceEnvironment {
    pub file_io: DockerFileIo,
    pub shell: DockerShell,
    pub cwd: String,
    pub home_dir: String,
}

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
    /// container recreated on the same clone if it was removed.
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
            match self.state_of(&existing.container_id).await?.as_str() {
                "missing" => {}
                _ => {
                    self.ensure_started(&existing).await?;
                    return self.info(existing).await;
                }
            }
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
        let config = if request.devcontainer {
            let at = clone_path.clone();
            tokio::task::spawn_blocking(move || read_devcontainer_config(&at))
                .await
                .map_err(blocking_error)??
        } else {
            None
        };
        let record = self
            .create_container(&request, &project, &clone_path, config.as_ref())
            .await?;
        record::save(base, &record)?;
        self.info(record).await
    }

    async fn create_container(
        &self,
        request: &CreateWorkspace,
        project: &Path,
        clone_path: &Path,
        config: Option<&DevcontainerConfig>,
    ) -> Result<WorkspaceRecord> {
        let engine = self.runtime.engine().await?;
        if let Some(config) = config {
            if config.privileged && !self.options.allow_host_commands {
                return Err(Error::new(
                    ErrorCode::Devcontainer,
                    format!(
                        "{}: privileged needs allowHostCommands",
                        config.config_path.display()
                    ),
                ));
            }
            if let (Some(init), true) =
                (&config.initialize_command, self.options.allow_host_commands)
            {
                run_on_host(project, init).await?;
            }
        }
        let image = self.image_for(&engine, request, project, config).await?;
        let mount_path = config
            .map(|c| {
                c.workspace_mount
                    .as_ref()
                    .map(|m| m.target.clone())
                    .unwrap_or_else(|| c.workspace_folder.clone())
            })
            .unwrap_or_else(|| DEFAULT_WORKSPACE_FOLDER.to_string());
        let mut environment = BTreeMap::new();
        let mut mounts = vec![ContainerMount {
            source: clone_path.to_string_lossy().into_owned(),
            target: mount_path.clone(),
            readonly: false,
        }];
        let mut container = ContainerConfig {
            name: Some(self.container_name(&request.session_id)),
            image: Some(image.clone()),
            working_directory: config
                .map(|c| c.workspace_folder.clone())
                .unwrap_or_else(|| mount_path.clone()),
            lifetime: request.lifetime,
            session_id: Some(request.session_id.clone()),
            clone_path: Some(clone_path.to_string_lossy().into_owned()),
            project_dir: Some(project.to_string_lossy().into_owned()),
            network: request.network.clone(),
            ..Default::default()
        };
        if let Some(config) = config {
            environment.extend(config.container_env.clone());
            environment.extend(config.run_args.env.clone());
            for m in config.mounts.iter().filter(|m| m.kind == "bind") {
                mounts.push(ContainerMount {
                    source: m.source.clone(),
                    target: m.target.clone(),
                    readonly: m.readonly,
                });
            }
            container.user = config
                .container_user
                .clone()
                .or(config.run_args.user.clone());
            container.memory = config.run_args.memory;
            container.cpu_shares = config.run_args.cpu_shares;
            container.labels = config.run_args.labels.clone();
            container.network = container.network.or(config.run_args.network.clone());
        }
        environment.extend(request.env.clone());
        container.environment = environment;
        container.mounts = mounts;
        let name = match self.runtime.create(container).await {
            Ok(name) => name,
            // Another process made it first: use that one.
            Err(err) if err.code == ErrorCode::Eexist => self.container_name(&request.session_id),
            Err(err) => return Err(err),
        };
        let record = WorkspaceRecord {
            session_id: request.session_id.clone(),
            project_dir: project.to_string_lossy().into_owned(),
            clone_path: clone_path.to_string_lossy().into_owned(),
            branch_name: branch_name(&request.session_id),
            container_id: name.clone(),
            container_mount_path: mount_path,
            image,
            lifetime: request.lifetime.as_str().to_string(),
            devcontainer: config.is_some(),
            created_at_ms: chrono::Utc::now().timestamp_millis(),
        };
        let started = async {
            self.runtime.start(&name).await?;
            if let Some(config) = config {
                let runner = self.runner(&engine, &record, config);
                runner
                    .run("onCreateCommand", &config.on_create_command)
                    .await?;
                runner
                    .run("updateContentCommand", &config.update_content_command)
                    .await?;
                runner
                    .run("postCreateCommand", &config.post_create_command)
                    .await?;
                runner
                    .run("postStartCommand", &config.post_start_command)
                    .await?;
            }
            Ok::<(), Error>(())
        }
        .await;
        if let Err(err) = started {
            // Leave no container behind; the clone (the session's work) stays.
            let _ = crate::reaper::remove_quietly(&engine, &name).await;
            return Err(err);
        }
        Ok(record)
    }

    fn runner<'a>(
        &self,
        engine: &'a Engine,
        record: &'a WorkspaceRecord,
        config: &'a DevcontainerConfig,
    ) -> InContainer<'a> {
        InContainer {
            engine,
            container: &record.container_id,
            user: config
                .remote_user
                .as_deref()
                .or(config.container_user.as_deref()),
            cwd: &config.workspace_folder,
            env: &config.remote_env,
        }
    }

    async fn image_for(
        &self,
        engine: &Engine,
        request: &CreateWorkspace,
        project: &Path,
        config: Option<&DevcontainerConfig>,
    ) -> Result<String> {
        if let Some(image) = &request.image {
            return Ok(image.clone());
        }
        if let Some(config) = config {
            if let Some(image) = &config.image {
                return Ok(image.clone());
            }
            if let Some(build) = &config.build {
                let tag = format!(
                    "container-isolation-devcontainer-{}:latest",
                    &devcontainer_id(project)[..16]
                );
                build_image(engine, build, &tag).await?;
                return Ok(tag);
            }
        }
        self.options.image.clone().ok_or_else(|| {
            Error::invalid_argument(format!(
                "session '{}': no image (give one to create(), the Workspaces constructor, or devcontainer.json)",
                request.session_id
            ))
        })
    }

    /// Starts a stopped workspace container, running `postStartCommand` as a start does.
    async fn ensure_started(&self, record: &WorkspaceRecord) -> Result<()> {
        let info = self.runtime.inspect(&record.container_id).await?;
        if info.state == ContainerState::Running {
            return Ok(());
        }
        self.runtime.start(&record.container_id).await?;
        if record.devcontainer {
            let at = PathBuf::from(&record.clone_path);
            let config = tokio::task::spawn_blocking(move || read_devcontainer_config(&at))
                .await
                .map_err(blocking_error)??;
            if let Some(config) = config {
                let engine = self.runtime.engine().await?;
                self.runner(&engine, record, &config)
                    .run("postStartCommand", &config.post_start_command)
                    .await?;
            }
        }
        Ok(())
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
        let cwd = record.container_mount_path.clone();
        let file_io = DockerFileIo::new(FileIoOptions {
            container: record.container_id.clone(),
            cwd: Some(cwd.clone()),
            user: None,
            engine: self.options.engine.clone(),
            ..Default::default()
        })?;
        let file_io = match &usage {
            Some(u) => file_io.with_usage(u.clone()),
            None => file_io,
        };
        let home_dir = file_io.home_dir().await?;
        let shell = DockerShell::new(ShellOptions {
            container: record.container_id.clone(),
            cwd: cwd.clone(),
            thread_id: thread_id.to_string(),
            log_dir: default_log_dir(),
            timeout: DEFAULT_TIMEOUT,
            env: BTreeMap::new(),
            user: None,
            shell: None,
            engine: self.options.engine.clone(),
        })?;
        let shell = match usage {
            Some(u) => shell.with_usage(u),
            None => shell,
        };
        Ok(WorkspaceEnvironment {
            file_io,
            shell,
            cwd,
            home_dir,
        })
    }
}
