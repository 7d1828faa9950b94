//! `createDockerEnvironment` (CONTRACT §4): a FileIO and a Shell bound to one container,
//! with its working and home directories probed from the container.

use napi_derive::napi;

use super::docker_file_io::DockerFileIO;
use super::docker_shell::DockerShell;
use super::engine::{engine_options, EngineOptions};
use super::error::Outcome;
use crate::{fileio, shell};

#[napi(object, object_to_js = false)]
pub struct DockerEnvironmentOptions {
    pub container: String,
    /// Default: the container's working directory.
    pub cwd: Option<String>,
    pub thread_id: String,
    pub engine: Option<EngineOptions>,
}

#[napi(object)]
pub struct EnvironmentConfig {
    #[napi(js_name = "type", ts_type = "'docker'")]
    pub kind: String,
    pub container: String,
    pub cwd: String,
}

#[napi(object, object_from_js = false)]
pub struct DockerEnvironment {
    #[napi(js_name = "fileIO")]
    pub file_io: DockerFileIO,
    pub shell: DockerShell,
    pub cwd: String,
    pub home_dir: String,
    /// `['file-io', 'shell', 'threads']`.
    pub available_capabilities: Vec<String>,
    pub environment_config: EnvironmentConfig,
}

/// The FileIO, Shell, cwd and home directory a host needs to run an agent thread inside
/// `container`.
#[napi(ts_return_type = "Promise<DockerEnvironment>")]
pub async fn create_docker_environment(
    opts: DockerEnvironmentOptions,
) -> Outcome<DockerEnvironment> {
    async {
        let engine = engine_options(opts.engine)?;
        let probe = fileio::DockerFileIo::new(fileio::FileIoOptions {
            container: opts.container.clone(),
            cwd: opts.cwd.clone(),
            user: None,
            engine: engine.clone(),
            ..Default::default()
        })?;
        let cwd = probe.cwd().await?;
        let home_dir = probe.home_dir().await?;
        let file_io = fileio::DockerFileIo::new(fileio::FileIoOptions {
            container: opts.container.clone(),
            cwd: Some(cwd.clone()),
            user: None,
            engine: engine.clone(),
            ..Default::default()
        })?;
        let shell = shell::DockerShell::new(shell::ShellOptions {
            container: opts.container.clone(),
            cwd: cwd.clone(),
            thread_id: opts.thread_id,
            log_dir: shell::default_log_dir(),
            timeout: shell::DEFAULT_TIMEOUT,
            env: Default::default(),
            user: None,
            shell: None,
            engine,
        })?;
        Ok(DockerEnvironment {
            file_io: DockerFileIO::from_core(file_io),
            shell: DockerShell::from_core(shell),
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
