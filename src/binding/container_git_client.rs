//! The `ContainerGitClient` class: Magenta's `GitClient`, whose `getState()` resolves the
//! state of the repository the environment works in, or `undefined`, and never rejects.

use std::collections::HashMap;
use std::sync::Arc;

use napi::bindgen_prelude::{Either, Undefined};
use napi_derive::napi;

use super::engine::{engine_options, EngineOptions};
use super::error::{sync_error, Code};
use crate::git;

/// Options of `new ContainerGitClient()`.
#[napi(object, object_to_js = false)]
pub struct ContainerGitClientOptions {
    /// The container's name or id.
    pub container: String,
    /// Absolute container path git runs in.
    pub cwd: String,
    /// Who runs git (a name, `uid`, or `uid:gid`); default the container's user.
    pub user: Option<String>,
    /// Added to git's environment.
    pub env: Option<HashMap<String, String>>,
    /// Which engine to talk to; default: auto-detected (see `detectEngine`).
    pub engine: Option<EngineOptions>,
    /// Default true: run git through the container's session agent where it runs.
    pub agent: Option<bool>,
}

/// The repository state `ContainerGitClient.getState` reports: Magenta's `GitState`.
#[napi(object, object_from_js = false)]
pub struct GitState {
    /// Absolute container path of the repository's top level.
    pub repo_root: String,
    /// `undefined` on a detached HEAD. The key is always present, as in Magenta's type.
    #[napi(ts_type = "string | undefined")]
    pub branch: Either<String, Undefined>,
    /// Empty in a repository without commits.
    pub head_sha: String,
    /// Subject line of the HEAD commit; empty without commits.
    pub head_subject: String,
    /// Paths with changes in the index.
    pub staged_count: u32,
    /// Tracked paths with changes in the work tree not in the index.
    pub unstaged_count: u32,
    /// Untracked paths (`??` in `git status --porcelain`).
    pub untracked_count: u32,
}

impl From<git::GitState> for GitState {
    fn from(state: git::GitState) -> Self {
        GitState {
            repo_root: state.repo_root,
            branch: state.branch.map_or(Either::B(()), Either::A),
            head_sha: state.head_sha,
            head_subject: state.head_subject,
            staged_count: state.staged_count,
            unstaged_count: state.unstaged_count,
            untracked_count: state.untracked_count,
        }
    }
}

/// Magenta's `GitClient` for a repository inside a container: git runs there, as argv,
/// never on the host.
#[napi]
pub struct ContainerGitClient {
    inner: Arc<git::GitClient>,
}

impl ContainerGitClient {
    pub fn from_core(inner: git::GitClient) -> Self {
        ContainerGitClient {
            inner: Arc::new(inner),
        }
    }
}

#[napi]
impl ContainerGitClient {
    /// Checks the options only (`INVALID_ARGUMENT`); the container is first reached by
    /// `getState`.
    #[napi(constructor)]
    pub fn new(opts: ContainerGitClientOptions) -> napi::Result<Self, Code> {
        let options = git::GitClientOptions {
            container: opts.container,
            cwd: opts.cwd,
            user: opts.user,
            env: opts.env.unwrap_or_default().into_iter().collect(),
            engine: engine_options(opts.engine).map_err(sync_error)?,
            agent: opts.agent.unwrap_or(true),
        };
        let client = git::GitClient::new(options).map_err(sync_error)?;
        Ok(ContainerGitClient::from_core(client))
    }

    /// The repository state of the cwd inside the container; `undefined` outside a
    /// repository and on any failure (container gone, no git, no such directory).
    #[napi(ts_return_type = "Promise<GitState | undefined>")]
    pub async fn get_state(&self) -> Either<GitState, Undefined> {
        match self.inner.state().await {
            Some(state) => Either::A(state.into()),
            None => Either::B(()),
        }
    }
}
