//! What an agent thread uses on a session Pod — its FileIO, its Shell, its git client, the
//! directory it works in and its user's home — all through the Pod's session agent: the Kubernetes
//! counterpart of `container_environment`.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::kubernetes_runtime::KubernetesRuntime;
use super::pod_files::PodFiles;
use super::pod_shell::PodAgentSource;
use super::serving_agent::{read_serving_agent, serving_agent};
use crate::agent::{connection_user, UserIds};
use crate::container_environment::ShellSettings;
use crate::error::Result;
use crate::git::{GitClient, GitClientOptions};
use crate::runtime::ContainerUse;
use crate::shell::{default_log_dir, CommandHost, DockerShell, ShellOptions, DEFAULT_TIMEOUT};

pub struct PodEnvironmentRequest {
    pub pod: String,
    /// Default: the container's working directory.
    pub cwd: Option<String>,
    pub thread_id: String,
    /// Who files are written and commands run as; default the Pod's user.
    pub user: Option<String>,
    /// Added to every command's environment (its whole environment with `replace_env`).
    pub env: BTreeMap<String, String>,
    pub replace_env: bool,
    pub shell: ShellSettings,
    /// Told of every file operation, command and git call (a session's idle tracking).
    pub usage: Option<Arc<dyn ContainerUse>>,
}

pub struct PodEnvironment {
    pub files: PodFiles,
    pub shell: DockerShell,
    pub git_client: GitClient,
    pub cwd: String,
    pub home_dir: String,
}

/// Who `user` is in the running Pod (the Pod's user when `None`): ids and home from the
/// image's own accounts, through the Pod's session agent.
pub async fn pod_user(
    runtime: &KubernetesRuntime,
    pod: &str,
    user: Option<&str>,
) -> Result<UserIds> {
    let agent = serving_agent(runtime, pod, "the accounts").await?;
    connection_user(&agent, user).await
}

/// Starts the Pod's agent (where it is not running yet) and binds a FileIO and a Shell to
/// the Pod; `UNSUPPORTED` with the reason where the agent cannot serve.
pub async fn pod_environment(
    runtime: Arc<KubernetesRuntime>,
    request: PodEnvironmentRequest,
) -> Result<PodEnvironment> {
    let pod = request.pod.as_str();
    let what = "files and commands";
    let (agent, cwd) = match request.cwd {
        Some(cwd) => (serving_agent(&runtime, pod, what).await?, cwd),
        None => read_serving_agent(&runtime, pod, what).await?,
    };
    let user = connection_user(&agent, request.user.as_deref()).await?;
    let home_dir = user.home.clone().unwrap_or_else(|| match user.uid {
        0 => "/root".to_string(),
        _ => "/".to_string(),
    });
    let source = Arc::new(PodAgentSource::new(runtime.clone(), pod));
    let mut git_client = GitClient::new(GitClientOptions {
        container: pod.to_string(),
        cwd: cwd.clone(),
        user: request.user.clone(),
        env: request.env.clone(),
        engine: Default::default(),
        agent: true,
    })?
    .on_agent(source.clone());
    let mut shell = DockerShell::new(ShellOptions {
        container: pod.to_string(),
        cwd: cwd.clone(),
        thread_id: request.thread_id,
        log_dir: request.shell.log_dir.unwrap_or_else(default_log_dir),
        timeout: request.shell.timeout.unwrap_or(DEFAULT_TIMEOUT),
        env: request.env,
        replace_env: request.replace_env,
        user: request.user.clone(),
        shell: None,
        host: CommandHost::Agent(source),
        output_limits: Default::default(),
    })?;
    let mut files = PodFiles::new(runtime, pod, request.user, Some(cwd.clone()));
    if let Some(usage) = request.usage {
        files = files.with_usage(usage.clone());
        shell = shell.with_usage(usage.clone());
        git_client = git_client.with_usage(usage);
    }
    Ok(PodEnvironment {
        files,
        shell,
        git_client,
        cwd,
        home_dir,
    })
}
