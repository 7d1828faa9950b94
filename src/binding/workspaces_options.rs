//! The options of `new Workspaces()` and `Workspaces.create` as JavaScript gives them
//! (docs/contract.md §6); `workspaces.rs` converts them.

use std::collections::HashMap;

use napi_derive::napi;

use super::egress::EgressOption;
use super::engine::EngineOptions;
use super::progress::ProgressCallback;
use super::resources::Resources;
use super::trust::WorkspaceTrust;
use super::warm_pool::WarmPoolOptions;
use super::workspace_info::RepositoryOptions;

/// Options of `new Workspaces()`.
#[napi(object, object_to_js = false)]
pub struct WorkspacesOptions {
    /// Where records, clones and trash live; default `$CONTAINER_ISOLATION_HOME`, else
    /// `~/.container-isolation`.
    pub base_dir: Option<String>,
    /// Which engine to talk to; default: auto-detected (see `detectEngine`).
    pub engine: Option<EngineOptions>,
    /// Image for sessions whose create() and devcontainer.json name none.
    pub image: Option<String>,
    /// Remove this process's `process`-lifetime containers even after a SIGKILL.
    pub watchdog: Option<bool>,
    /// What a session's devcontainer.json may reach beyond the session (nothing by
    /// default: the config is untrusted input); `create` may give its own instead.
    pub trust: Option<WorkspaceTrust>,
    /// Older spelling of `trust: { hostCommands: true, privileged: true }`.
    pub allow_host_commands: Option<bool>,
    /// Stop a session's container (not remove it) after this long without a FileIO or
    /// Shell use; the next use starts it again.
    pub idle_timeout_ms: Option<f64>,
    /// Default true: carry commands and file operations out through the container's session
    /// agent where it runs. False: engine execs and archive calls only.
    pub agent: Option<bool>,
    /// Where sessions may connect (default `'public'`: the public internet only, through
    /// the session relay; the container itself has no network); `create` may give its own.
    #[napi(ts_type = "'none' | 'public' | 'bridge' | EgressPolicy")]
    pub egress: Option<EgressOption>,
    /// Every session's resource limits (`create` may override each); `pids` defaults to
    /// `min(4096, pid_max / 8)` of the host, memory, CPUs and open files to none. Fixed
    /// when a session is created.
    pub resources: Option<Resources>,
    /// When a session's images are pulled from their registries (credentials from the
    /// host's docker config): `'missing'` (default), `'always'` or `'never'` (a missing
    /// image rejects `IMAGE_NOT_FOUND`); `create` may give its own.
    #[napi(ts_type = "'missing' | 'always' | 'never'")]
    pub pull: Option<String>,
    /// Told of each session's creation as it goes (pulls with bytes, build lines, steps),
    /// at most ~10 events a second per phase plus the last; `create` may give its own.
    #[napi(ts_type = "(event: ProgressEventInfo) => void")]
    pub on_progress: Option<ProgressCallback>,
    /// Where new sessions' repositories live for their containers: `'bind'` (the host
    /// clone bind-mounted), `'volume'` (a copy in a named volume on the engine, read back
    /// for `changes`/`export`/`push`), or `'auto'` (default: `bind` where the engine runs on
    /// this machine, else `volume`).
    #[napi(ts_type = "'auto' | 'bind' | 'volume'")]
    pub storage: Option<String>,
    /// Keep containers created and started ahead for the settings of the latest session:
    /// `create` claims one instead of making its container (docs/contract.md §6).
    pub pool: Option<WarmPoolOptions>,
    /// Checkpoints a session keeps, the oldest dropped first (default 20, at least 1).
    pub max_checkpoints: Option<u32>,
}

/// Options of `Workspaces.create`.
#[napi(object, object_to_js = false)]
pub struct CreateWorkspaceOptions {
    /// The host project to clone; never written to, unless it has no commit and
    /// `plainFolder` is `'initialize'`. Either this or `repository`.
    pub project_dir: Option<String>,
    /// A `projectDir` that is not a git repository, or has no commit yet: `'snapshot'`
    /// (default) takes its files (its `.gitignore` rules and the library's defaults
    /// applied) as one commit of a repository the library owns under `baseDir/repositories`,
    /// writing nothing under the folder (`WorkspaceInfo.snapshotOf` names it, `projectDir`
    /// is that repository, `export` writes there); `'initialize'` makes the folder itself a
    /// repository with one commit, as `CloneManager` does.
    #[napi(ts_type = "'snapshot' | 'initialize'")]
    pub plain_folder: Option<String>,
    /// A remote repository to clone on the host instead of a project, with credentials for
    /// this clone only; `ref` is then a branch or tag of the remote, or a commit id.
    pub repository: Option<RepositoryOptions>,
    /// `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`, else `INVALID_ARGUMENT`.
    pub session_id: String,
    /// Where the session branch starts: a branch, tag or commit of the project (default
    /// its HEAD), resolved with libgit2. One that names no commit rejects
    /// `GIT_REF_NOT_FOUND` and makes nothing; one that is not a plain revision (starts
    /// with `-`, holds spaces, `:`, `@{`, `..`) rejects `INVALID_ARGUMENT`.
    #[napi(js_name = "ref")]
    pub start_ref: Option<String>,
    /// Overrides devcontainer.json's and the constructor's image.
    pub image: Option<String>,
    /// Default true: honour the project's devcontainer.json.
    pub devcontainer: Option<bool>,
    /// Added to the container's environment.
    pub env: Option<HashMap<String, String>>,
    /// `none`, `bridge` or a network's name.
    pub network: Option<String>,
    /// Default 'session'.
    #[napi(ts_type = "'process' | 'session'")]
    pub lifetime: Option<String>,
    /// Replaces the constructor's `trust` for this session.
    pub trust: Option<WorkspaceTrust>,
    /// Replaces the constructor's `egress` for this session (for an existing session: as
    /// `setEgress`).
    #[napi(ts_type = "'none' | 'public' | 'bridge' | EgressPolicy")]
    pub egress: Option<EgressOption>,
    /// Over the constructor's `resources`, field by field, for a new session (an existing
    /// one keeps the limits it was created with). An invalid value rejects
    /// `INVALID_ARGUMENT` before anything is made.
    pub resources: Option<Resources>,
    /// Replaces the constructor's `pull` for this call.
    #[napi(ts_type = "'missing' | 'always' | 'never'")]
    pub pull: Option<String>,
    /// Replaces the constructor's `onProgress` for this call.
    #[napi(ts_type = "(event: ProgressEventInfo) => void")]
    pub on_progress: Option<ProgressCallback>,
}
