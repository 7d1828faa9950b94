//! The FileIO, Shell and git client an agent thread uses inside one container, with the
//! directory it works in and its user's home: the one place both `createDockerEnvironment`
//! and a workspace's `environment()` get them from.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::EngineOptions;
use crate::error::Result;
use crate::fileio::{DockerFileIo, FileIoOptions};
use crate::git::{GitClient, GitClientOptions};
use crate::runtime::ContainerUse;
use crate::shell::{default_log_dir, CommandHost, DockerShell, ShellOptions, DEFAULT_TIMEOUT};

pub struct EnvironmentRequest {
    pub container: String,
    /// Default: the container's working directory.
    pub cwd: Option<String>,
    pub thread_id: String,
    /// Who files are written and commands run as; default the container's user.
    pub user: Option<String>,
    /// Added to every command's environment.
    pub env: BTreeMap<String, String>,
    /// `env` is the commands' whole environment, not an addition (git's stays an addition).
    pub replace_env: bool,
    pub engine: EngineOptions,
    /// Run before every FileIO and Shell use (a workspace's idle tracking).
    pub usage: Option<Arc<dyn ContainerUse>>,
    /// Use the container's session agent where it runs.
    pub agent: bool,
    /// The shell's command logs and per-command timeout.
    pub shell: ShellSettings,
}

/// What the caller may choose of the environment's shell; each default as `DockerShell`'s.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellSettings {
    /// Default `${os.tmpdir()}/container-isolation`.
    pub log_dir: Option<PathBuf>,
    /// Default 300 s.
    pub timeout: Option<Duration>,
}

pub struct ContainerEnvironment {
    pub file_io: DockerFileIo,
    pub shell: DockerShell,
    pub git_client: GitClient,
    pub cwd: String,
    pub home_dir: String,
}

pub async fn container_environment(request: EnvironmentRequest) -> Result<ContainerEnvironment> {
    let file_io = |cwd: Option<String>| {
        DockerFileIo::new(FileIoOptions {
            container: request.container.clone(),
            cwd,
            user: request.user.clone(),
            engine: request.engine.clone(),
            agent: request.agent,
            ..Default::default()
        })
    };
    let cwd = match &request.cwd {
        Some(cwd) => cwd.clone(),
        None => file_io(None)?.cwd().await?,
    };
    let mut files = file_io(Some(cwd.clone()))?;
    let mut shell = DockerShell::new(ShellOptions {
        container: request.container.clone(),
        cwd: cwd.clone(),
        thread_id: request.thread_id.clone(),
        log_dir: request
            .shell
            .log_dir
            .clone()
            .unwrap_or_else(default_log_dir),
        timeout: request.shell.timeout.unwrap_or(DEFAULT_TIMEOUT),
        env: request.env.clone(),
        replace_env: request.replace_env,
        user: request.user.clone(),
        shell: None,
        host: CommandHost::Engine {
            engine: Box::new(request.engine.clone()),
            agent: request.agent,
        },
        output_limits: Default::default(),
    })?;
    let mut git_client = GitClient::new(GitClientOptions {
        container: request.container.clone(),
        cwd: cwd.clone(),
        user: request.user.clone(),
        env: request.env.clone(),
        engine: request.engine.clone(),
        agent: request.agent,
    })?;
    if let Some(usage) = &request.usage {
        files = files.with_usage(usage.clone());
        shell = shell.with_usage(usage.clone());
        git_client = git_client.with_usage(usage.clone());
    }
    let home_dir = files.home_dir().await?;
    Ok(ContainerEnvironment {
        file_io: files,
        shell,
        git_client,
        cwd,
        home_dir,
    })
}
