//! The `DockerRuntime` class (docs/contract.md §2): its options, exit hooks and watchdog; the
//! methods are the shared ones of `runtime_calls`.

use std::sync::Arc;

use napi::Env;
use napi_derive::napi;

use super::container_types::{ContainerConfig, ContainerInfo, ExecOptions, ExecResult};
use super::engine::{engine_options, EngineOptions};
use super::error::{sync_error, Code, Outcome};
use super::exec_stream::{self, ChunkCallback, ExecStreamOptions, NativeExecStream};
use super::exit_hooks;
use super::progress::pull_policy;
use super::runtime_calls::{self as calls, LogsOptions};
use super::terminal::{terminal_request, Terminal, TerminalOptions};
use super::watchdog;
use crate::container_runtime::{self, RuntimeOptions};
use crate::runtime::Direction;

/// Options of `new DockerRuntime()`.
#[napi(object)]
pub struct DockerRuntimeOptions {
    /// Which engine to talk to; default: auto-detected (see `detectEngine`).
    pub engine: Option<EngineOptions>,
    /// Image used when a container config names none.
    pub image: Option<String>,
    /// Where this library keeps state; recorded in labels so `list` sees only its own.
    pub base_dir: Option<String>,
    /// Start a detached watchdog process that removes this process's `process`-lifetime
    /// containers within seconds if it dies without running its exit hooks (SIGKILL).
    pub watchdog: Option<bool>,
    /// Default true: run `exec` through the container's session agent where it runs, and
    /// give containers this runtime creates the agent by a read-only bind mount.
    pub agent: Option<bool>,
    /// When `create` pulls its image from the registry (credentials from the host's docker
    /// config): `'missing'` (default), `'always'`, or `'never'` (a missing image rejects
    /// `IMAGE_NOT_FOUND`). A config's `pull` wins.
    #[napi(ts_type = "'missing' | 'always' | 'never'")]
    pub pull: Option<String>,
}

/// Lace's `ContainerRuntime` on Docker or Podman through the Engine API. Rejections carry
/// stable codes: `ENGINE_UNAVAILABLE`, `IMAGE_NOT_FOUND`, `REGISTRY_AUTH`,
/// `REGISTRY_RATE_LIMITED`, `REGISTRY_ERROR`, `REGISTRY_UNREACHABLE`, `CONTAINER_NOT_FOUND`,
/// `CONTAINER_NOT_RUNNING`, `TIMEOUT`, `INVALID_ARGUMENT`, `ENGINE_ERROR`.
#[napi]
pub struct DockerRuntime {
    inner: Arc<container_runtime::DockerRuntime>,
}

#[napi]
impl DockerRuntime {
    /// Connects lazily (one connection per endpoint per process) and installs the exit
    /// hooks that remove `process`-lifetime containers.
    #[napi(constructor)]
    pub fn new(env: Env, opts: Option<DockerRuntimeOptions>) -> napi::Result<Self, Code> {
        exit_hooks::install(&env).map_err(|e| napi::Error::new(Code("ENGINE_ERROR"), e.reason))?;
        let (engine, image, base_dir, watchdog, agent, pull) = match opts {
            Some(o) => (
                o.engine,
                o.image,
                o.base_dir,
                o.watchdog.unwrap_or(false),
                o.agent.unwrap_or(true),
                o.pull,
            ),
            None => (None, None, None, false, true, None),
        };
        let engine = engine_options(engine).map_err(sync_error)?;
        let pull = pull_policy(pull).map_err(sync_error)?.unwrap_or_default();
        if watchdog {
            watchdog::ensure_started(&engine).map_err(sync_error)?;
        }
        Ok(DockerRuntime {
            inner: Arc::new(container_runtime::DockerRuntime::new(RuntimeOptions {
                engine,
                image,
                base_dir,
                agent,
                pull,
            })),
        })
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

    /// SIGTERM, then SIGKILL after `timeout` ms (default 10000); exits by 143/137 count as
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

    /// The native half of `execStream` (use `execStream`, which gives Node streams): starts
    /// `options.command` with stdin open, delivering output to the two callbacks.
    #[napi(
        ts_args_type = "containerId: string, options: ExecStreamOptions, onStdout: (chunk: Buffer) => void, onStderr: (chunk: Buffer) => void",
        ts_return_type = "Promise<NativeExecStream>"
    )]
    pub async fn exec_stream_native(
        &self,
        container_id: String,
        options: ExecStreamOptions,
        on_stdout: ChunkCallback,
        on_stderr: ChunkCallback,
    ) -> Outcome<NativeExecStream> {
        exec_stream::start(&self.inner, container_id, options, on_stdout, on_stderr)
            .await
            .into()
    }

    /// Opens a terminal in the container, through its session agent where it runs, else
    /// the engine's own TTY exec (docs/contract.md §9).
    #[napi(ts_return_type = "Promise<Terminal>")]
    pub async fn terminal(&self, container_id: String, opts: TerminalOptions) -> Outcome<Terminal> {
        async {
            let request = terminal_request(opts)?;
            let (input, output) = self.inner.open_terminal(&container_id, &request).await?;
            Ok(Terminal::new(input, output, None))
        }
        .await
        .into()
    }

    /// Resolves with the main process's exit code once it exits.
    #[napi(ts_return_type = "Promise<number>")]
    pub async fn wait(&self, container_id: String) -> Outcome<i64> {
        calls::wait(&*self.inner, container_id).await
    }

    /// Delivers the log line by line to `onLine`; resolves when the log ends (when the
    /// container exits, if following).
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
