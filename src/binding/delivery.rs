//! `Workspaces.changes` (docs/contract.md §6): converts options and the result; the work
//! is `crate::delivery`'s.

use napi_derive::napi;

use super::error::Outcome;
use super::workspace_sessions::Sessions;
use super::workspaces::Workspaces;
use crate::delivery::{self, ChangesOptions as CoreOptions, DEFAULT_MAX_PATCH_BYTES};
use crate::error::Error;

/// Options of `Workspaces.changes`.
#[napi(object, object_to_js = false)]
pub struct ChangesOptions {
    /// Include the unified diffs base..HEAD and HEAD..work tree (default false).
    pub patch: Option<bool>,
    /// Where the two diffs together are cut, each at a line end (default 1 MiB): `patch`
    /// first, `uncommittedPatch` gets what is left; `patchTruncated` and
    /// `uncommittedPatchTruncated` say so.
    pub max_patch_bytes: Option<f64>,
}

/// A commit of the session since its base.
#[napi(object)]
pub struct SessionCommit {
    /// The commit id.
    pub id: String,
    /// The first line of its message.
    pub summary: String,
    /// The author's name.
    pub author_name: String,
    /// The author's email.
    pub author_email: String,
    /// The author's time, Unix milliseconds.
    pub time_ms: f64,
}

/// A file changed between the base and the session's HEAD.
#[napi(object)]
pub struct ChangedFile {
    /// Its path at HEAD (in the base, for a deleted file).
    pub path: String,
    /// Its path in the base, for a rename or copy.
    pub old_path: Option<String>,
    /// How it changed.
    #[napi(ts_type = "'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'typechange'")]
    pub status: String,
    /// Lines added (0 for a binary file).
    pub additions: f64,
    /// Lines deleted (0 for a binary file).
    pub deletions: f64,
    /// Binary by content, or a blob over 64 MiB (never loaded).
    pub binary: bool,
}

/// A path of the work tree that differs from HEAD, or is untracked and not ignored.
#[napi(object)]
pub struct UncommittedFile {
    /// The path; an untracked directory is one entry ending in `/`, as git shows it.
    pub path: String,
    /// Its path in HEAD, for a staged rename.
    pub old_path: Option<String>,
    /// `git status --porcelain`'s two letters: index, then work tree (`??` untracked).
    pub status: String,
}

/// What a session changed since its base (`Workspaces.changes`).
#[napi(object)]
pub struct SessionChanges {
    /// The commit the changes are counted from.
    pub base: String,
    /// `recorded`: the session's base, an ancestor of HEAD; `merge-base`: HEAD's history
    /// was rewritten, counted from the merge base; `unrelated`: HEAD shares no history with
    /// the base, compared with the base's tree.
    #[napi(ts_type = "'recorded' | 'merge-base' | 'unrelated'")]
    pub base_kind: String,
    /// The base recorded when the session was created.
    pub recorded_base: String,
    /// The session's HEAD commit.
    pub head: String,
    /// Commits reachable from HEAD and not from the base, newest first.
    pub commits: Vec<SessionCommit>,
    /// Files changed between the base and HEAD.
    pub files: Vec<ChangedFile>,
    /// Uncommitted and untracked (not ignored) paths of the work tree.
    pub uncommitted: Vec<UncommittedFile>,
    /// The unified diff base..HEAD, when asked.
    pub patch: Option<String>,
    /// Whether `patch` was cut at `maxPatchBytes`.
    pub patch_truncated: Option<bool>,
    /// With `patch`: the unified diff from HEAD to the work tree as `export`'s snapshot
    /// would record it (staged, unstaged, untracked and not ignored files; a file over
    /// 64 MiB as a binary one); empty when nothing is uncommitted.
    pub uncommitted_patch: Option<String>,
    /// Whether `uncommittedPatch` was cut at what `patch` left of `maxPatchBytes`.
    pub uncommitted_patch_truncated: Option<bool>,
}

fn options(opts: Option<ChangesOptions>) -> Result<CoreOptions, Error> {
    let (patch, max) = opts.map_or((None, None), |o| (o.patch, o.max_patch_bytes));
    let max_patch_bytes = match max {
        None => DEFAULT_MAX_PATCH_BYTES,
        Some(n) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 => {
            n.min(usize::MAX as f64) as usize
        }
        Some(n) => {
            return Err(Error::invalid_argument(format!(
                "maxPatchBytes {n} is not a whole number of bytes"
            )))
        }
    };
    Ok(CoreOptions {
        patch: patch.unwrap_or(false),
        max_patch_bytes,
    })
}

impl From<delivery::Changes> for SessionChanges {
    fn from(c: delivery::Changes) -> Self {
        let asked = c.patch.is_some();
        SessionChanges {
            base: c.base,
            base_kind: c.base_kind.as_str().to_string(),
            recorded_base: c.recorded_base,
            head: c.head,
            commits: c
                .commits
                .into_iter()
                .map(|k| SessionCommit {
                    id: k.id,
                    summary: k.summary,
                    author_name: k.author_name,
                    author_email: k.author_email,
                    time_ms: k.time_ms as f64,
                })
                .collect(),
            files: c
                .files
                .into_iter()
                .map(|f| ChangedFile {
                    path: f.path,
                    old_path: f.old_path,
                    status: f.status.as_str().to_string(),
                    additions: f.additions as f64,
                    deletions: f.deletions as f64,
                    binary: f.binary,
                })
                .collect(),
            uncommitted: c
                .uncommitted
                .into_iter()
                .map(|u| UncommittedFile {
                    path: u.path,
                    old_path: u.old_path,
                    status: u.status,
                })
                .collect(),
            patch: c.patch,
            patch_truncated: asked.then_some(c.patch_truncated),
            uncommitted_patch: c.uncommitted_patch,
            uncommitted_patch_truncated: asked.then_some(c.uncommitted_patch_truncated),
        }
    }
}

#[napi]
impl Workspaces {
    /// What the session changed since its base: its commits, the files changed between
    /// the base and its HEAD, its uncommitted work and, with `patch`, the unified diffs of
    /// its commits and of its uncommitted work.
    /// The clone is read on the host as hostile input (no hook, filter, textconv, external
    /// diff or fsmonitor runs; a `.git` that is not the clone's own directory is refused
    /// with `GIT`); past a bound it rejects `LIMIT_EXCEEDED`, past 60 s `TIMEOUT`.
    #[napi(ts_return_type = "Promise<SessionChanges>")]
    pub async fn changes(
        &self,
        session_id: String,
        opts: Option<ChangesOptions>,
    ) -> Outcome<SessionChanges> {
        async move {
            let opts = options(opts)?;
            match &self.sessions {
                Sessions::Engine(inner) => inner.changes(&session_id, opts).await,
                Sessions::Pods(pods) => pods.changes(&session_id, opts).await,
            }
            .map(SessionChanges::from)
        }
        .await
        .into()
    }
}
