//! `createDockerEnvironment` (docs/contract.md §4): a FileIO, a Shell and a git client
//! bound to one container, with its working and home directories probed from the container.

use napi_derive::napi;

use super::container_git_client::ContainerGitClient;
use super::docker_file_io::DockerFileIO;
use super::docker_shell::DockerShell;
use super::engine::{engine_options, EngineOptions};
use super::error::Outcome;
use crate::container_environment::{container_environment, EnvironmentRequest};

/// Options of `createDockerEnvironment`.
#[napi(object, object_to_js = false)]
pub struct DockerEnvironmentOptions {
    /// The container's name or id.
    pub container: String,
    /// Default: the container's working directory.
    pub cwd: Option<String>,
    /// Names the shell's log directory (`threads/<threadId>`); a plain file name, else
    /// `INVALID_ARGUMENT`.
    pub thread_id: String,
    /// Which engine to talk to; default: auto-detected (see `detectEngine`).
    pub engine: Option<EngineOptions>,
    /// Default true: carry commands and file operations out through the container's session
    /// agent where it runs. False: engine execs and archive calls only.
    pub agent: Option<bool>,
}

/// Magenta's `EnvironmentConfig` of a container environment.
#[napi(object)]
pub struct EnvironmentConfig {
    /// Always `docker`.
    #[napi(js_name = "type", ts_type = "'docker'")]
    pub kind: String,
    /// The container's name or id.
    pub container: String,
    /// The environment's working directory in the container.
    pub cwd: String,
}

/// The native result of `createDockerEnvironment`; the package's entry point returns
/// Magenta's `Environment` shape instead.
#[napi(object, object_from_js = false)]
pub struct DockerEnvironment {
    /// Files of the container, relative paths against `cwd`.
    #[napi(js_name = "fileIO")]
    pub file_io: DockerFileIO,
    /// Commands in the container, in `cwd`.
    pub shell: DockerShell,
    /// Git state of the repository `cwd` is in.
    pub git_client: ContainerGitClient,
    /// Absolute container path.
    pub cwd: String,
    /// The container user's home directory, from its `/etc/passwd`.
    pub home_dir: String,
    /// `['file-io', 'shell', 'threads']` (the package's entry point makes it a `Set`).
    pub available_capabilities: Vec<String>,
    /// `{ type: 'docker', container, cwd }`.
    pub environment_config: EnvironmentConfig,
}

/// The FileIO, Shell, cwd and home directory a host needs to run an agent thread inside
/// `container`.
#[napi(ts_return_type = "Promise<DockerEnvironment>")]
pub async fn create_docker_environment(
    opts: DockerEnvironmentOptions,
) -> Outcome<DockerEnvironment> {
    async {
        let env = container_environment(EnvironmentRequest {
            container: opts.container.clone(),
            cwd: opts.cwd,
            thread_id: opts.thread_id,
            user: None,
            env: Default::default(),
            replace_env: false,
            engine: engine_options(opts.engine)?,
            usage: None,
            agent: opts.agent.unwrap_or(true),
            shell: Default::default(),
        })
        .await?;
        let (file_io, shell, cwd, home_dir) = (env.file_io, env.shell, env.cwd, env.home_dir);
        Ok(DockerEnvironment {
            file_io: DockerFileIO::from_core(file_io),
            shell: DockerShell::from_core(shell),
            git_client: ContainerGitClient::from_core(env.git_client),
            cwd: cwd.clone(),
            home_dir,
            available_capabilities: ["file-io", "shell", "threads"].map(String::from).to_vec(),
            environment_config: EnvironmentConfig {
                kind: "docker".into(),
                container: opts.container,
                cwd,
            },
        })
    }
    .await
    .into()
}
