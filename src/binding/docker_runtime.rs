//! The `DockerRuntime` class (CONTRACT §2): converts arguments, calls the core runtime, and
//! bridges the `onLine` callback of `logs`.

use std::sync::Arc;

use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::Env;
use napi_derive::napi;

use super::container_types::{
    duration_ms, ContainerConfig, ContainerInfo, ExecOptions, ExecResult, OutputLine,
};
use super::engine::{engine_options, EngineOptions};
use super::error::{sync_error, Code, Outcome};
use super::exit_hooks;
use super::watchdog;
use crate::error::Result;
use crate::runtime::{self, Direction, LogsRequest, RuntimeOptions};

#[napi(object)]
pub struct DockerRuntimeOptions {
    pub engine: Option<EngineOptions>,
    /// Image used when a container config names none.
    pub image: Option<String>,
    /// Where this library keeps state; recorded in labels so `list` sees only its own.
    pub base_dir: Option<String>,
    /// Start a detached watchdog process that removes this process's `process`-lifetime
    /// containers within seconds if it dies without running its exit hooks (SIGKILL).
    pub watchdog: Option<bool>,
}

pub type LineCallback = ThreadsafeFunction<OutputLine, (), OutputLine, napi::Status, false>;

#[napi(object, object_to_js = false)]
pub struct LogsOptions {
    pub follow: Option<bool>,
    /// Unix milliseconds.
    pub since: Option<f64>,
    #[napi(ts_type = "(line: OutputLine) => void")]
    pub on_line: Option<LineCallback>,
}

#[napi]
pub struct DockerRuntime {
    inner: Arc<runtime::DockerRuntime>,
}

#[napi]
impl DockerRuntime {
    #[napi(constructor)]
    pub fn new(env: Env, opts: Option<DockerRuntimeOptions>) -> napi::Result<Self, Code> {
        exit_hooks::install(&env).map_err(|e| napi::Error::new(Code("ENGINE_ERROR"), e.reason))?;
        let (engine, image, base_dir, watchdog) = match opts {
            Some(o) => (o.engine, o.image, o.base_dir, o.watchdog.unwrap_or(false)),
            None => (None, None, None, false),
        };
        let engine = engine_options(engine).map_err(sync_error)?;
        if watchdog {
            watchdog::ensure_started(&engine).map_err(sync_error)?;
        }
        Ok(DockerRuntime {
            inner: Arc::new(runtime::DockerRuntime::new(RuntimeOptions {
                engine,
                image,
                base_dir,
            })),
        })
    }

    /// Creates the container and returns its name, which every method accepts as its id.
    #[napi(ts_return_type = "Promise<string>")]
    pub async fn create(&self, config: ContainerConfig) -> Outcome<String> {
        let runtime = self.inner.clone();
        async move { runtime.create(config.try_into()?).await }
            .await
            .into()
    }

    /// Starts the container; a no-op when it runs already.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn start(&self, container_id: String) -> Outcome<()> {
        self.inner.start(&container_id).await.into()
    }

    /// SIGTERM, then SIGKILL after `timeout` ms (default 10000); exits by 143/137 count as
    /// stopped.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn stop(&self, container_id: String, timeout: Option<f64>) -> Outcome<()> {
        let runtime = self.inner.clone();
        async move {
            let grace = duration_ms(timeout, "stop timeout")?;
            runtime.stop(&container_id, grace).await
        }
        .await
        .into()
    }

    /// Removes the container, stopping it first if it runs.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn remove(&self, container_id: String) -> Outcome<()> {
        self.inner.remove(&container_id).await.into()
    }

    /// Runs a command and buffers its output; a non-zero exit is a result, not a rejection.
    #[napi(ts_return_type = "Promise<ExecResult>")]
    pub async fn exec(&self, container_id: String, options: ExecOptions) -> Outcome<ExecResult> {
        let runtime = self.inner.clone();
        async move {
            let outcome = runtime.exec(&container_id, options.try_into()?).await?;
            Ok(ExecResult::from(outcome))
        }
        .await
        .into()
    }

    #[napi(ts_return_type = "Promise<ContainerInfo>")]
    pub async fn inspect(&self, container_id: String) -> Outcome<ContainerInfo> {
        self.inner
            .inspect(&container_id)
            .await
            .map(ContainerInfo::from)
            .into()
    }

    /// Containers this library created under this runtime's base directory.
    #[napi(ts_return_type = "Promise<ContainerInfo[]>")]
    pub async fn list(&self) -> Outcome<Vec<ContainerInfo>> {
        let listed: Result<Vec<_>> = self.inner.list().await;
        listed
            .map(|all| all.into_iter().map(ContainerInfo::from).collect())
            .into()
    }

    /// Resolves with the main process's exit code once it exits.
    #[napi(ts_return_type = "Promise<number>")]
    pub async fn wait(&self, container_id: String) -> Outcome<i64> {
        self.inner.wait(&container_id).await.into()
    }

    /// Delivers the log line by line to `onLine`; resolves when the log ends (when the
    /// container exits, if following).
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn logs(&self, container_id: String, opts: Option<LogsOptions>) -> Outcome<()> {
        let runtime = self.inner.clone();
        let (follow, since, on_line) = match opts {
            Some(o) => (o.follow.unwrap_or(false), o.since, o.on_line),
            None => (false, None, None),
        };
        let request = LogsRequest {
            follow,
            since_ms: since.filter(|s| s.is_finite()).map(|s| s.floor() as i64),
        };
        let result = runtime
            .logs(&container_id, request, |line| {
                if let Some(callback) = &on_line {
                    callback.call(line.into(), ThreadsafeFunctionCallMode::NonBlocking);
                }
            })
            .await;
        drop(on_line);
        result.into()
    }

    #[napi]
    pub fn translate_to_container(
        &self,
        host_path: String,
        container_id: String,
    ) -> napi::Result<String, Code> {
        self.inner
            .translate(&host_path, &container_id, Direction::ToContainer)
            .map_err(sync_error)
    }

    #[napi]
    pub fn translate_to_host(
        &self,
        container_path: String,
        container_id: String,
    ) -> napi::Result<String, Code> {
        self.inner
            .translate(&container_path, &container_id, Direction::ToHost)
            .map_err(sync_error)
    }
}
