//! Magenta's `GitClient` inside a container: the repository state of the environment's cwd,
//! from the same git commands Magenta runs, as argv, as the environment's user and with its
//! environment. `state()` never fails: whatever goes wrong is "no state".

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::git_command::{Capture, GitRunner};
use super::git_state::{branch, head, repo_root, GitState, StatusCounter};
use crate::agent::agent_if;
use crate::engine::{Engine, EngineOptions};
use crate::error::{Error, Result};
use crate::runtime::exec::ExecRequest;
use crate::runtime::{begin_use, ContainerUse};
use crate::shell::AgentSource;

/// How much of the output of `rev-parse`, `symbolic-ref` and `log -1` is kept.
const SMALL_OUTPUT: usize = 64 * 1024;
/// The longest any one of the commands may run.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub struct GitClientOptions {
    pub container: String,
    /// Absolute container path the commands run in.
    pub cwd: String,
    /// Who runs git; default the container's user.
    pub user: Option<String>,
    /// Added to git's environment.
    pub env: BTreeMap<String, String>,
    pub engine: EngineOptions,
    /// Run git through the container's session agent where it runs.
    pub agent: bool,
}

pub struct GitClient {
    options: GitClientOptions,
    usage: Option<Arc<dyn ContainerUse>>,
    timeout: Duration,
    /// Where the container has no engine exec (a Pod): its agent runs git.
    agent_source: Option<Arc<dyn AgentSource>>,
}

/// `git` with the options every command gets: a clone owned by another user still answers,
/// and nothing (not even `status` refreshing the index) takes a lock or writes.
fn git(args: &[&str]) -> Vec<String> {
    ["git", "-c", "safe.directory=*", "--no-optional-locks"]
        .iter()
        .chain(args)
        .map(|s| s.to_string())
        .collect()
}

impl GitClient {
    pub fn new(options: GitClientOptions) -> Result<GitClient> {
        if !options.cwd.starts_with('/') {
            return Err(Error::invalid_argument(format!(
                "git client cwd '{}' must be an absolute container path",
                options.cwd
            )));
        }
        Ok(GitClient {
            options,
            usage: None,
            timeout: GIT_TIMEOUT,
            agent_source: None,
        })
    }

    /// Runs `usage` before every `state()`, held until it ends (a workspace's idle tracking).
    pub fn with_usage(mut self, usage: Arc<dyn ContainerUse>) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Runs git through the agent `source` gives, with no engine (a Pod's).
    pub fn on_agent(mut self, source: Arc<dyn AgentSource>) -> Self {
        self.agent_source = Some(source);
        self
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn options(&self) -> &GitClientOptions {
        &self.options
    }

    /// The repository state of the cwd; `None` outside a repository and on any failure
    /// (no such container, no git, no such directory).
    pub async fn state(&self) -> Option<GitState> {
        match self.try_state().await {
            Ok(state) => state,
            Err(err) => {
                tracing::debug!(
                    "git state in container '{}' is unknown: {}",
                    self.options.container,
                    err
                );
                None
            }
        }
    }

    async fn try_state(&self) -> Result<Option<GitState>> {
        let _use = begin_use(self.usage.as_ref()).await?;
        let container = self.options.container.as_str();
        let (engine, agent) = match &self.agent_source {
            Some(source) => (None, Some(source.connection().await?)),
            None => {
                let engine = Engine::connect(&self.options.engine).await?;
                let agent = agent_if(self.options.agent, &engine, container).await?;
                (Some(engine), agent)
            }
        };
        let runner = GitRunner {
            engine: engine.as_ref(),
            container,
            agent,
            base: ExecRequest {
                working_dir: Some(self.options.cwd.clone()),
                env: self.options.env.clone(),
                user: self.options.user.clone(),
                ..Default::default()
            },
            timeout: self.timeout,
        };
        let mut root = Capture::new(SMALL_OUTPUT);
        let code = runner
            .run(git(&["rev-parse", "--show-toplevel"]), |b| root.push(b))
            .await?;
        let Some(repo_root) = repo_root(code, &root.bytes) else {
            return Ok(None);
        };
        let (mut symbolic, mut log, mut status) = (
            Capture::new(SMALL_OUTPUT),
            Capture::new(SMALL_OUTPUT),
            StatusCounter::default(),
        );
        let (symbolic_code, log_code, _) = tokio::try_join!(
            runner.run(git(&["symbolic-ref", "--short", "-q", "HEAD"]), |b| {
                symbolic.push(b)
            }),
            runner.run(git(&["log", "-1", "--format=%H%x00%s"]), |b| log.push(b)),
            runner.run(git(&["status", "--porcelain"]), |b| status.push(b)),
        )?;
        let (head_sha, head_subject) = head(log_code, &log.bytes);
        let counts = status.finish();
        Ok(Some(GitState {
            repo_root,
            branch: branch(symbolic_code, &symbolic.bytes),
            head_sha,
            head_subject,
            staged_count: counts.staged,
            unstaged_count: counts.unstaged,
            untracked_count: counts.untracked,
        }))
    }
}
