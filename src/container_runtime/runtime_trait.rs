//! Lace's `ContainerRuntime` (docs/contract.md §2) as a Rust trait: what `DockerRuntime` and
//! `AppleContainerRuntime` both provide, so that code over a runtime is written once.

use std::future::Future;
use std::time::Duration;

use super::adoption::{adopted_id, check_adoptable};
use super::container_config::ContainerConfig;
use crate::error::{ErrorCode, Result};
use crate::output::OutputLine;
use crate::runtime::exec::{ExecOutcome, ExecRequest};
use crate::runtime::Direction;
use crate::runtime::LogsRequest;
use crate::runtime::{ContainerInfo, ContainerState};

pub trait ContainerRuntime: Send + Sync + 'static {
    /// Creates the container and returns its name, which every method accepts as its id.
    fn create(&self, config: ContainerConfig) -> impl Future<Output = Result<String>> + Send;

    /// Starts the container; a no-op when it runs already.
    fn start(&self, id: &str) -> impl Future<Output = Result<()>> + Send;

    /// SIGTERM, then SIGKILL after `grace` (the runtime's default when `None`); exits by
    /// 143/137 count as stopped.
    fn stop(&self, id: &str, grace: Option<Duration>) -> impl Future<Output = Result<()>> + Send;

    /// Removes the container, stopping it first if it runs.
    fn remove(&self, id: &str) -> impl Future<Output = Result<()>> + Send;

    /// Runs a command and buffers its output; a non-zero exit is a result, not an error.
    fn exec(
        &self,
        id: &str,
        request: ExecRequest,
    ) -> impl Future<Output = Result<ExecOutcome>> + Send;

    fn inspect(&self, id: &str) -> impl Future<Output = Result<ContainerInfo>> + Send;

    /// Containers this library created under this runtime's base directory.
    fn list(&self) -> impl Future<Output = Result<Vec<ContainerInfo>>> + Send;

    /// The main process's exit code, once it exits.
    fn wait(&self, id: &str) -> impl Future<Output = Result<i64>> + Send;

    /// Delivers the log line by line; ends when the log does (when the container exits, if
    /// following).
    fn logs(
        &self,
        id: &str,
        request: LogsRequest,
        on_line: impl FnMut(OutputLine) + Send,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Translates through the mounts known for `id` (from `create`, `inspect` or `list` in
    /// this process); an id not known here is `CONTAINER_NOT_FOUND`.
    fn translate(&self, path: &str, id: &str, direction: Direction) -> Result<String>;

    /// `inspect`, live from the engine; `None` when the container does not exist.
    fn daemon_inspect(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<ContainerInfo>>> + Send {
        async move {
            match self.inspect(id).await {
                Ok(info) => Ok(Some(info)),
                Err(err) if err.code == ErrorCode::ContainerNotFound => Ok(None),
                Err(err) => Err(err),
            }
        }
    }

    /// Takes over the container `config` names, which an earlier process created: checks
    /// that it is the container the config describes and learns its mounts. The engine's
    /// state is authoritative; `_state` (the caller's last view) is not trusted.
    fn adopt(
        &self,
        config: ContainerConfig,
        _state: ContainerState,
    ) -> impl Future<Output = Result<()>> + Send {
        async move {
            let id = adopted_id(&config)?;
            let info = self.inspect(&id).await?;
            check_adoptable(&config, &info)
        }
    }
}
