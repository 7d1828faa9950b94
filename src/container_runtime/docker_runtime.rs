//! `DockerRuntime`: Lace's `ContainerRuntime` over the Engine API.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use bollard::query_parameters::{
    ListContainersOptionsBuilder, RemoveContainerOptionsBuilder, StopContainerOptionsBuilder,
    WaitContainerOptionsBuilder,
};
use futures_util::StreamExt;

use super::container_config::ContainerConfig;
use super::relayed_network::RelayedContainers;
use super::runtime_trait::ContainerRuntime;
use crate::agent::agent_for;
use crate::base_dir::resolve_base_dir;
use crate::egress::{ensure_relay, Egress, RelayChannel};
use crate::engine::{Engine, EngineOptions, PullPolicy};
use crate::error::{Error, ErrorCode, Result};
use crate::output::OutputLine;
use crate::runtime::exec::{ExecOutcome, ExecRequest};
use crate::runtime::labels;
use crate::runtime::run_buffered;
use crate::runtime::Direction;
use crate::runtime::KnownMounts;
use crate::runtime::LineFolder;
use crate::runtime::{info_from_inspect, info_from_summary};
use crate::runtime::{stream_logs, LogsRequest};
use crate::runtime::{ContainerInfo, ContainerState};

/// Grace period of `stop` when the caller gives none (Docker's own default).
const DEFAULT_STOP_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    pub engine: EngineOptions,
    pub image: Option<String>,
    pub base_dir: Option<String>,
    /// Run `exec` through the container's session agent where it runs.
    pub agent: bool,
    /// When `create` pulls its image, unless the config says.
    pub pull: PullPolicy,
}

pub struct DockerRuntime {
    pub(super) engine_options: EngineOptions,
    pub(super) default_image: Option<String>,
    pub(super) base_dir: PathBuf,
    pub(super) mounts: KnownMounts,
    pub(super) agent: bool,
    pub(super) relayed: RelayedContainers,
    pub(super) pull: PullPolicy,
    /// Upload the agent into new containers even where it could be bind-mounted.
    pub(super) agent_upload: bool,
}

pub(super) fn container_subject(id: &str) -> String {
    format!("container '{id}'")
}

impl DockerRuntime {
    pub fn new(options: RuntimeOptions) -> Self {
        DockerRuntime {
            engine_options: options.engine,
            default_image: options.image.filter(|s| !s.is_empty()),
            base_dir: resolve_base_dir(options.base_dir.as_deref()),
            mounts: KnownMounts::default(),
            agent: options.agent,
            relayed: RelayedContainers::default(),
            pull: options.pull,
            agent_upload: false,
        }
    }

    /// New containers get their agent uploaded, not bind-mounted, as on a remote engine.
    pub fn with_agent_upload(mut self) -> Self {
        self.agent_upload = true;
        self
    }

    /// A runtime on the same engine, base directory and pull policy that puts no agent into
    /// the containers it makes (a session's service containers run none).
    pub fn without_agent(&self) -> DockerRuntime {
        DockerRuntime {
            engine_options: self.engine_options.clone(),
            default_image: None,
            base_dir: self.base_dir.clone(),
            mounts: KnownMounts::default(),
            agent: false,
            relayed: RelayedContainers::default(),
            pull: self.pull,
            agent_upload: false,
        }
    }

    /// When `create` pulls its image, unless the config says.
    pub fn pull_policy(&self) -> PullPolicy {
        self.pull
    }

    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    /// Whether commands go through the session agent where it runs.
    pub fn uses_agent(&self) -> bool {
        self.agent
    }

    /// A terminal in `container`, through its agent unless the runtime says not.
    pub async fn open_terminal(
        &self,
        container: &str,
        request: &crate::terminal::TerminalRequest,
    ) -> Result<(
        crate::terminal::TerminalInput,
        crate::terminal::TerminalOutput,
    )> {
        let engine = self.engine().await?;
        let agent = crate::agent::agent_if(self.uses_agent(), &engine, container).await?;
        crate::terminal::open_terminal(Some(&engine), container, agent.as_ref(), request).await
    }

    pub async fn engine(&self) -> Result<Engine> {
        Engine::connect(&self.engine_options).await
    }

    /// Starts `container`'s relay under `egress` (or gives a running one that policy) and
    /// keeps it for the container's later starts in this process.
    pub async fn attach_relay(
        &self,
        container: &str,
        session_id: &str,
        egress: Egress,
    ) -> Result<Arc<RelayChannel>> {
        let engine = self.engine().await?;
        let channel = ensure_relay(&engine, container, session_id, &egress).await?;
        self.relayed.remember(container, session_id, egress);
        Ok(channel)
    }

    /// Gives `container`'s relay `egress` for new connections, here and at its later starts.
    pub async fn set_egress(&self, container: &str, egress: Egress) -> Result<()> {
        let engine = self.engine().await?;
        crate::egress::set_egress(&engine, container, &egress).await?;
        if let Some((session, _)) = self.relayed.get(container) {
            self.relayed.remember(container, &session, egress);
        }
        Ok(())
    }
}

/// Closes what this process holds on a container that stopped or is gone: its agent's
/// connection and line socket, and its root's `/proc` handles, whoever holds them.
async fn close_handles(engine: &Engine, ids: &[&str]) {
    crate::agent::close_container(engine, ids).await;
    crate::fileio::close_roots(ids);
}

impl ContainerRuntime for DockerRuntime {
    async fn create(&self, config: ContainerConfig) -> Result<String> {
        self.create_new(config).await
    }

    async fn start(&self, id: &str) -> Result<()> {
        let engine = self.engine().await?;
        let subject = container_subject(id);
        // An already running container answers 304, which is success.
        engine
            .call(&subject, engine.docker().start_container(id, None))
            .await?;
        match self.relayed.get(id) {
            Some((session, egress)) => {
                ensure_relay(&engine, id, &session, &egress).await?;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Stops with SIGTERM, then SIGKILL after `timeout` (rounded up to whole seconds, the
    /// API's unit). Stopping a container that is not running is not an error. The handles
    /// this process holds on it (its root, its agent's connection and line) close with it.
    async fn stop(&self, id: &str, timeout: Option<Duration>) -> Result<()> {
        let engine = self.engine().await?;
        let grace = timeout.unwrap_or(DEFAULT_STOP_TIMEOUT);
        let seconds = grace.as_millis().div_ceil(1000);
        let options = StopContainerOptionsBuilder::default()
            .t(i32::try_from(seconds).unwrap_or(i32::MAX))
            .build();
        let subject = container_subject(id);
        let engine_id = engine
            .inspect_container(id, &subject)
            .await
            .ok()
            .and_then(|inspected| inspected.id);
        let request = engine.docker().stop_container(id, Some(options));
        let limit = engine.timeout() + Duration::from_secs(seconds as u64);
        let answered = tokio::time::timeout(limit, request).await.map_err(|_| {
            Error::timeout(format!(
                "{subject}: stop did not finish within {} ms",
                limit.as_millis()
            ))
        })?;
        close_handles(&engine, &[id, engine_id.as_deref().unwrap_or_default()]).await;
        answered.map_err(|e| engine.annotate(crate::engine::from_bollard(e, &subject)))
    }

    /// Stops the container first if it runs (so its processes end in order), then removes
    /// it with its anonymous volumes.
    async fn remove(&self, id: &str) -> Result<()> {
        let info = self.inspect(id).await?;
        if info.state == ContainerState::Running {
            self.stop(id, None).await?;
        }
        let engine = self.engine().await?;
        let options = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        engine
            .call(
                &container_subject(id),
                engine.docker().remove_container(id, Some(options)),
            )
            .await?;
        self.mounts.forget(&[id, &info.id, &info.engine_id]);
        self.relayed.forget(&engine, id);
        close_handles(&engine, &[id, &info.id, &info.engine_id]).await;
        LineFolder::remove_for(&self.base_dir, &info.id, |k| {
            info.labels.get(k).map(String::as_str)
        });
        Ok(())
    }

    async fn exec(&self, id: &str, request: ExecRequest) -> Result<ExecOutcome> {
        let engine = self.engine().await?;
        request.check_command(id)?;
        if self.agent {
            if let Some(connection) = agent_for(&engine, id).await? {
                return crate::agent::run_buffered(&connection, request).await;
            }
        }
        run_buffered(&engine, id, request).await
    }

    async fn inspect(&self, id: &str) -> Result<ContainerInfo> {
        let engine = self.engine().await?;
        let inspected = engine.inspect_container(id, &container_subject(id)).await?;
        let info = info_from_inspect(inspected);
        self.mounts
            .remember(&[id, &info.id, &info.engine_id], info.mounts.clone());
        Ok(info)
    }

    /// Containers this library created with this runtime's base directory.
    async fn list(&self) -> Result<Vec<ContainerInfo>> {
        let engine = self.engine().await?;
        let base_dir = self.base_dir.to_string_lossy().into_owned();
        let mut filters: HashMap<&str, Vec<String>> = HashMap::new();
        filters.insert(
            "label",
            vec![
                format!("{}=true", labels::MANAGED),
                format!("{}={base_dir}", labels::BASE_DIR),
            ],
        );
        let options = ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        let summaries = engine
            .list_containers(options, "list of managed containers")
            .await?;
        Ok(summaries
            .into_iter()
            .map(|summary| {
                let info = info_from_summary(summary);
                self.mounts
                    .remember(&[&info.id, &info.engine_id], info.mounts.clone());
                info
            })
            .collect())
    }

    /// Waits for the main process to exit and returns its exit code.
    async fn wait(&self, id: &str) -> Result<i64> {
        let engine = self.engine().await?;
        let subject = container_subject(id);
        let options = WaitContainerOptionsBuilder::default()
            .condition("not-running")
            .build();
        let mut stream = engine.docker().wait_container(id, Some(options));
        match stream.next().await {
            Some(Ok(answer)) => Ok(answer.status_code),
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(code),
            Some(Err(err)) => Err(engine.annotate(crate::engine::from_bollard(err, &subject))),
            None => Err(Error::new(
                ErrorCode::EngineError,
                format!("{subject}: the engine closed the wait without an exit code"),
            )),
        }
    }

    async fn logs(
        &self,
        id: &str,
        request: LogsRequest,
        on_line: impl FnMut(OutputLine) + Send,
    ) -> Result<()> {
        let engine = self.engine().await?;
        stream_logs(&engine, id, request, on_line).await
    }

    /// Translates through the mounts known for `id` (from `create`, `inspect` or `list` in
    /// this process); an id not known here is `CONTAINER_NOT_FOUND`.
    fn translate(&self, path: &str, id: &str, direction: Direction) -> Result<String> {
        self.mounts.translate(path, id, direction)
    }
}
