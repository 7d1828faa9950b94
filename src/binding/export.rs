//! `Workspaces.export` (docs/contract.md §6): converts options and the result; the work
//! is `crate::delivery`'s.

use napi_derive::napi;

use super::error::Outcome;
use super::workspace_sessions::Sessions;
use super::workspaces::Workspaces;
use crate::delivery::Exported;
use crate::workspace::ExportRequest;

/// Options of `Workspaces.export`.
#[napi(object, object_to_js = false)]
pub struct ExportOptions {
    /// The branch written in the project (default `session/<sessionId>`).
    pub branch: Option<String>,
    /// Snapshot the session's uncommitted and untracked (not ignored) files as one more
    /// commit on top of its HEAD, without moving the clone's HEAD or index (default false).
    pub uncommitted: Option<bool>,
    /// The snapshot commit's message.
    pub message: Option<String>,
    /// Move an existing branch (never the one checked out in the project).
    pub force: Option<bool>,
}

/// What `Workspaces.export` wrote.
#[napi(object)]
pub struct SessionExport {
    /// The branch's short name, as given or defaulted.
    pub branch: String,
    /// Its full ref, `refs/heads/<branch>`.
    pub reference: String,
    /// The commit it points at: the snapshot, else the session's HEAD.
    pub commit: String,
    /// The session's HEAD.
    pub head: String,
    /// The snapshot commit of uncommitted work, when one was made.
    pub snapshot: Option<String>,
    /// Where the branch pointed before, when `force` moved it.
    pub previous: Option<String>,
    /// Objects copied into the project (those it did not have).
    pub objects_copied: f64,
    /// The repository the branch was written in: the session's project, which for a
    /// `repository` session or a plain folder's snapshot is the library's own, under
    /// `baseDir/repositories` (fetch the branch from there).
    pub project_dir: String,
}

impl From<Exported> for SessionExport {
    fn from(e: Exported) -> Self {
        SessionExport {
            branch: e
                .reference
                .strip_prefix("refs/heads/")
                .unwrap_or(&e.reference)
                .to_string(),
            reference: e.reference,
            commit: e.commit.to_string(),
            head: e.head.to_string(),
            snapshot: e.snapshot.map(|o| o.to_string()),
            previous: e.previous.map(|o| o.to_string()),
            objects_copied: e.objects_copied as f64,
            project_dir: e.project.to_string_lossy().into_owned(),
        }
    }
}

#[napi]
impl Workspaces {
    /// Writes the session's work as `refs/heads/<branch>` of its project, copying (and
    /// checking) only the objects the project lacks. Nothing else of the project changes:
    /// not its HEAD, index, work tree, config, hooks or other refs. An existing branch
    /// rejects `EEXIST` unless `force`; the project's checked-out branch rejects
    /// `INVALID_ARGUMENT`; the clone is read as hostile input (`GIT`, `LIMIT_EXCEEDED`,
    /// `TIMEOUT` as for `changes`), and a refused export writes nothing.
    #[napi(ts_return_type = "Promise<SessionExport>")]
    pub async fn export(
        &self,
        session_id: String,
        opts: Option<ExportOptions>,
    ) -> Outcome<SessionExport> {
        let request = opts.map_or_else(ExportRequest::default, |o| ExportRequest {
            branch: o.branch,
            uncommitted: o.uncommitted.unwrap_or(false),
            message: o.message,
            force: o.force.unwrap_or(false),
        });
        async move {
            match &self.sessions {
                Sessions::Engine(inner) => inner.export(&session_id, request).await,
                Sessions::Pods(pods) => pods.export(&session_id, request).await,
            }
            .map(SessionExport::from)
        }
        .await
        .into()
    }
}
