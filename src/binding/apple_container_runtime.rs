//! The `AppleContainerRuntime` class: Lace's `ContainerRuntime` over Apple's `container`
//! CLI (macOS), with the same methods, objects and shared bodies (`runtime_calls`) as
//! `DockerRuntime`.

use std::sync::Arc;

use napi_derive::napi;

use super::container_types::{ContainerConfig, ContainerInfo, ExecOptions, ExecResult};
use super::error::{Code, Outcome};
use super::runtime_calls::{self as calls, LogsOptions};
use crate::apple;
use crate::runtime::Direction;

/// Options of `new AppleContainerRuntime()`.
#[napi(object, object_to_js = false)]
pub struct AppleContainerRuntimeOptions {
    /// The `container` executable; default `container` on PATH.
    pub program: Option<String>,
    /// Image used when a container config names none.
    pub image: Option<String>,
    /// Where this library keeps state; default `$CONTAINER_ISOLATION_HOME`, else
    /// `~/.container-isolation`.
    pub base_dir: Option<String>,
}

/// Lace's `ContainerRuntime` on macOS through Apple's `container` CLI (argv as data, never
/// a shell string). Same methods and objects as `DockerRuntime`; `restartPolicy` and
/// `sysctls` reject `INVALID_ARGUMENT`, and there is no `execStream`.
#[napi]
pub struct AppleContainerRuntime {
    inner: Arc<apple::AppleContainerRuntime>,
}

#[napi]
impl AppleContainerRuntime {
    /// Connects to nothing yet: the CLI is run by each call, which rejects
    /// `ENGINE_UNAVAILABLE` when it is missing.
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

    /// Creates the container and returns its name, which every method accepts as its id.
    #[napi(ts_return_type = "Promise<string>")]
    pub async fn create(&self, config: ContainerConfig) -> Outcome<String> {
        calls::create(&*self.inner, config).await
    }

    /// Starts the container; a no-op when it runs already.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn start(&self, container_id: String) -> Outcome<()> {
        calls::start(&*self.inner, container_id).await
    }

    /// SIGTERM, then SIGKILL after `timeout` ms (default 5000); exits by 143/137 count as
    /// stopped.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn stop(&self, container_id: String, timeout: Option<f64>) -> Outcome<()> {
        calls::stop(&*self.inner, container_id, timeout).await
    }

    /// Removes the container, stopping it first if it runs.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn remove(&self, container_id: String) -> Outcome<()> {
        calls::remove(&*self.inner, container_id).await
    }

    /// Runs a command and buffers its output; a non-zero exit is a result, not a rejection.
    #[napi(ts_return_type = "Promise<ExecResult>")]
    pub async fn exec(&self, container_id: String, options: ExecOptions) -> Outcome<ExecResult> {
        calls::exec(&*self.inner, container_id, options).await
    }

    /// The container's state, pid, times, exit code, image, labels and bind mounts; rejects
    /// `CONTAINER_NOT_FOUND`.
    #[napi(ts_return_type = "Promise<ContainerInfo>")]
    pub async fn inspect(&self, container_id: String) -> Outcome<ContainerInfo> {
        calls::inspect(&*self.inner, container_id).await
    }

    /// Live from the engine; `null` when the container does not exist.
    #[napi(ts_return_type = "Promise<ContainerInfo | null>")]
    pub async fn daemon_inspect(&self, container_id: String) -> Outcome<Option<ContainerInfo>> {
        calls::daemon_inspect(&*self.inner, container_id).await
    }

    /// Takes over the container `config` names (`name`, else `id`) that an earlier process
    /// created: rejects `INVALID_ARGUMENT` when its bind mounts are not the config's, or
    /// when it is a 'process'-lifetime container whose creator is gone.
    #[napi(
        ts_args_type = "config: ContainerConfig, state: 'created' | 'running' | 'stopped' | 'failed'",
        ts_return_type = "Promise<void>"
    )]
    pub async fn adopt(&self, config: ContainerConfig, state: String) -> Outcome<()> {
        calls::adopt(&*self.inner, config, state).await
    }

    /// Containers this library created under this runtime's base directory.
    #[napi(ts_return_type = "Promise<ContainerInfo[]>")]
    pub async fn list(&self) -> Outcome<Vec<ContainerInfo>> {
        calls::list(&*self.inner).await
    }

    /// Resolves with the main process's exit code once it exits.
    #[napi(ts_return_type = "Promise<number>")]
    pub async fn wait(&self, container_id: String) -> Outcome<i64> {
        calls::wait(&*self.inner, container_id).await
    }

    /// Delivers the log line by line to `onLine`; resolves when the log ends (when the
    /// container exits, if following). The CLI has no `since`: it is ignored.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn logs(&self, container_id: String, opts: Option<LogsOptions>) -> Outcome<()> {
        calls::logs(&*self.inner, container_id, opts).await
    }

    /// A host path under one of the container's bind mounts as the container sees it
    /// (longest mount first; a mount root gets a trailing slash); a path under no mount is
    /// returned unchanged. Throws `CONTAINER_NOT_FOUND` for a container this runtime has
    /// not created, inspected or listed.
    #[napi]
    pub fn translate_to_container(
        &self,
        host_path: String,
        container_id: String,
    ) -> napi::Result<String, Code> {
        calls::translate(
            &*self.inner,
            host_path,
            container_id,
            Direction::ToContainer,
        )
    }

    /// The reverse of `translateToContainer`: a container path under a bind mount as the
    /// host path; unchanged when under no mount.
    #[napi]
    pub fn translate_to_host(
        &self,
        container_path: String,
        container_id: String,
    ) -> napi::Result<String, Code> {
        calls::translate(
            &*self.inner,
            container_path,
            container_id,
            Direction::ToHost,
        )
    }
}
