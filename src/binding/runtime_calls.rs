//! The method bodies that `DockerRuntime` and `AppleContainerRuntime` share, written once
//! over the core `ContainerRuntime` trait: argument conversion, the call, the result's
//! conversion, and the `onLine` bridge of `logs`.

use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use super::container_types::{ContainerConfig, ContainerInfo, ExecOptions, ExecResult, OutputLine};
use super::durations::duration_ms;
use super::error::{sync_error, Code, Outcome};
use crate::container_runtime::ContainerRuntime;
use crate::error::Error;
use crate::runtime::{ContainerState, Direction, LogsRequest};

pub type LineCallback = ThreadsafeFunction<OutputLine, (), OutputLine, napi::Status, false>;

/// Options of `logs`.
#[napi(object, object_to_js = false)]
pub struct LogsOptions {
    /// Default false: deliver what is logged so far. True: keep delivering until the
    /// container exits.
    pub follow: Option<bool>,
    /// Unix milliseconds.
    pub since: Option<f64>,
    /// Called with each line (ANSI stripped, blank lines dropped).
    #[napi(ts_type = "(line: OutputLine) => void")]
    pub on_line: Option<LineCallback>,
}

pub async fn create(runtime: &impl ContainerRuntime, config: ContainerConfig) -> Outcome<String> {
    async { runtime.create(config.try_into()?).await }
        .await
        .into()
}

pub async fn start(runtime: &impl ContainerRuntime, id: String) -> Outcome<()> {
    runtime.start(&id).await.into()
}

pub async fn stop(
    runtime: &impl ContainerRuntime,
    id: String,
    timeout: Option<f64>,
) -> Outcome<()> {
    async {
        let grace = duration_ms(timeout, "stop timeout")?;
        runtime.stop(&id, grace).await
    }
    .await
    .into()
}

pub async fn remove(runtime: &impl ContainerRuntime, id: String) -> Outcome<()> {
    runtime.remove(&id).await.into()
}

pub async fn exec(
    runtime: &impl ContainerRuntime,
    id: String,
    options: ExecOptions,
) -> Outcome<ExecResult> {
    async {
        let outcome = runtime.exec(&id, options.try_into()?).await?;
        Ok(ExecResult::from(outcome))
    }
    .await
    .into()
}

pub async fn inspect(runtime: &impl ContainerRuntime, id: String) -> Outcome<ContainerInfo> {
    runtime.inspect(&id).await.map(ContainerInfo::from).into()
}

pub async fn daemon_inspect(
    runtime: &impl ContainerRuntime,
    id: String,
) -> Outcome<Option<ContainerInfo>> {
    runtime
        .daemon_inspect(&id)
        .await
        .map(|info| info.map(ContainerInfo::from))
        .into()
}

pub async fn adopt(
    runtime: &impl ContainerRuntime,
    config: ContainerConfig,
    state: String,
) -> Outcome<()> {
    async {
        let state = ContainerState::parse(&state).ok_or_else(|| {
            Error::invalid_argument(format!(
                "adopt: state '{state}' is not 'created', 'running', 'stopped' or 'failed'"
            ))
        })?;
        runtime.adopt(config.try_into()?, state).await
    }
    .await
    .into()
}

pub async fn list(runtime: &impl ContainerRuntime) -> Outcome<Vec<ContainerInfo>> {
    runtime
        .list()
        .await
        .map(|all| all.into_iter().map(ContainerInfo::from).collect())
        .into()
}

pub async fn wait(runtime: &impl ContainerRuntime, id: String) -> Outcome<i64> {
    runtime.wait(&id).await.into()
}

/// Each line goes to `onLine` as it arrives; the callback is released when the log ends.
pub async fn logs(
    runtime: &impl ContainerRuntime,
    id: String,
    opts: Option<LogsOptions>,
) -> Outcome<()> {
    let (follow, since, on_line) = match opts {
        Some(o) => (o.follow.unwrap_or(false), o.since, o.on_line),
        None => (false, None, None),
    };
    let request = LogsRequest {
        follow,
        since_ms: since.filter(|s| s.is_finite()).map(|s| s.floor() as i64),
    };
    let result = runtime
        .logs(&id, request, |line| {
            if let Some(callback) = &on_line {
                callback.call(line.into(), ThreadsafeFunctionCallMode::NonBlocking);
            }
        })
        .await;
    drop(on_line);
    result.into()
}

pub fn translate(
    runtime: &impl ContainerRuntime,
    path: String,
    id: String,
    direction: Direction,
) -> napi::Result<String, Code> {
    runtime.translate(&path, &id, direction).map_err(sync_error)
}
