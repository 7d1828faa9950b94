//! The `AppleContainerRuntime` class: Lace's `ContainerRuntime` over Apple's `container`
//! CLI (macOS), with the same methods and objects as `DockerRuntime`.

use std::sync::Arc;

use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;

use super::container_types::{
    duration_ms, ContainerConfig, ContainerInfo, ExecOptions, ExecResult,
};
use super::docker_runtime::LogsOptions;
use super::error::{sync_error, Code, Outcome};
use crate::apple;
use crate::runtime::Direction;

#[napi(object, object_to_js = false)]
pub struct AppleContainerRuntimeOptions {
    /// The `container` executable; default `container` on PATH.
    pub program: Option<String>,
    pub image: Option<String>,
    pub base_dir: Option<String>,
}

#[napi]
pub struct AppleContainerRuntime {
    inner: Arc<apple::AppleContainerRuntime>,
}

#[napi]
impl AppleContainerRuntime {
    #[napi(constructor)]
    pub fn new(opts: Option<AppleContainerRuntimeOptions>) -> Self {
        let opts = opts.unwrap_or(AppleContainerRuntimeOptions {
            program: None,
            image: None,
            base_dir: None,
        });
        AppleContainerRuntime {
            inner: Arc::new(apple::AppleContainerRuntime::new(
                apple::AppleRuntimeOptions {
                    program: opts.program,
                    image: opts.image,
                    base_dir: opts.base_dir,
                },
            )),
        }
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub async fn create(&self, config: ContainerConfig) -> Outcome<String> {
        let runtime = self.inner.clone();
        async move { runtime.create(config.try_into()?).await }
            .await
            .into()
    }

    #[napi(ts_return_type = "Promise<void>")]
    pub async fn start(&self, container_id: String) -> Outcome<()> {
        self.inner.start(&container_id).await.into()
    }

    /// SIGTERM, SIGKILL after `timeout` ms (default 5000); 143/137 exits are "stopped".
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

    #[napi(ts_return_type = "Promise<void>")]
    pub async fn remove(&self, container_id: String) -> Outcome<()> {
        self.inner.remove(&container_id).await.into()
    }

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

    #[napi(ts_return_type = "Promise<ContainerInfo[]>")]
    pub async fn list(&self) -> Outcome<Vec<ContainerInfo>> {
        self.inner
            .list()
            .await
            .map(|all| all.into_iter().map(ContainerInfo::from).collect())
            .into()
    }

    #[napi(ts_return_type = "Promise<number>")]
    pub async fn wait(&self, container_id: String) -> Outcome<i64> {
        self.inner.wait(&container_id).await.into()
    }

    /// `since` is not supported by the CLI and is ignored.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn logs(&self, container_id: String, opts: Option<LogsOptions>) -> Outcome<()> {
        let (follow, on_line) = match opts {
            Some(o) => (o.follow.unwrap_or(false), o.on_line),
            None => (false, None),
        };
        let result = self
            .inner
            .logs(&container_id, follow, |line| {
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
