//! Lace's `ContainerRuntime` (CONTRACT §2) as a Rust trait: what `DockerRuntime` and
//! `AppleContainerRuntime` both provide, so that code over a runtime is written once.

use std::future::Future;
use std::time::Duration;

use super::container_config::ContainerConfig;
use super::container_info::ContainerInfo;
use super::exec::{ExecOutcome, ExecRequest};
use super::logs::LogsRequest;
use super::path_translation::Direction;
use crate::error::Result;
use crate::output::OutputLine;

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
}
