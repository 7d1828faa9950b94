//! Where a new session's clone comes from: the host's project directory as it is; a remote
//! repository cloned on the host into a project of the library's own (see
//! `crate::clone::clone_remote_project`); or, for a plain folder (no repository, or one
//! without a commit), by the host's choice, a snapshot of it in a project of the library's
//! own (`crate::clone::snapshot_folder`, the default: nothing is written into the folder)
//! or the folder initialised as a repository in place (`CloneManager`'s way). That own
//! project goes to the trash with the session.

use std::path::PathBuf;

use super::plain_folder::PlainFolder;
use super::workspaces::{blocking_error, CreateWorkspace, Workspaces};
use crate::clone::{
    clone_remote_project, has_own_commit, snapshot_folder, trash_remote_project, SnapshotLimits,
};
use crate::error::{Error, ErrorCode, Result};

/// The project a session is cloned from, and what it is.
pub(super) struct SessionSource {
    pub project: PathBuf,
    /// The ref the session starts at, in `project`.
    pub start: Option<String>,
    /// For a plain folder's snapshot: the folder.
    pub snapshot_of: Option<PathBuf>,
}

impl Workspaces {
    /// The project to clone and the ref to start at: for a remote, its clone on the host and
    /// the commit `ref` resolved to there; for a plain folder snapshotted, the snapshot.
    pub(super) async fn session_source(&self, request: &CreateWorkspace) -> Result<SessionSource> {
        let Some(transfer) = request.repository.clone() else {
            return self.local_source(request).await;
        };
        if !request.project_dir.is_empty() {
            return Err(Error::invalid_argument(
                "give either projectDir or repository, not both",
            ));
        }
        let (base, id, start) = (
            self.options.base_dir.clone(),
            request.session_id.clone(),
            request.start_ref.clone(),
        );
        let (project, commit) = tokio::task::spawn_blocking(move || {
            clone_remote_project(&base, &id, &transfer, start.as_deref())
        })
        .await
        .map_err(blocking_error)??;
        Ok(SessionSource {
            project,
            start: Some(commit.to_string()),
            snapshot_of: None,
        })
    }

    async fn local_source(&self, request: &CreateWorkspace) -> Result<SessionSource> {
        if request.project_dir.is_empty() {
            return Err(Error::invalid_argument(
                "create needs projectDir or repository",
            ));
        }
        let folder = std::fs::canonicalize(&request.project_dir).map_err(|e| {
            Error::new(
                ErrorCode::Enoent,
                format!("project {}: {e}", request.project_dir),
            )
        })?;
        let plain = {
            let folder = folder.clone();
            tokio::task::spawn_blocking(move || folder.is_dir() && !has_own_commit(&folder))
                .await
                .map_err(blocking_error)?
        };
        if !plain || request.plain_folder == PlainFolder::Initialize {
            return Ok(SessionSource {
                project: folder,
                start: request.start_ref.clone(),
                snapshot_of: None,
            });
        }
        if let Some(start) = &request.start_ref {
            // Nothing a ref could name; nothing is made.
            return Err(Error::new(
                ErrorCode::GitRefNotFound,
                format!(
                    "ref {start:?}: {} has no commit (it is not a git repository)",
                    folder.display()
                ),
            ));
        }
        let (base, id, from) = (
            self.options.base_dir.clone(),
            request.session_id.clone(),
            folder.clone(),
        );
        let (project, commit) = tokio::task::spawn_blocking(move || {
            snapshot_folder(&base, &id, &from, SnapshotLimits::default())
        })
        .await
        .map_err(blocking_error)??;
        Ok(SessionSource {
            project,
            start: Some(commit.to_string()),
            snapshot_of: Some(folder),
        })
    }

    /// Moves a session's own project (a remote's clone or a folder's snapshot, if it has
    /// one) to the trash.
    pub(super) async fn trash_remote_project(&self, session_id: &str) -> Result<()> {
        let (clones, id) = (self.clones.clone(), session_id.to_string());
        tokio::task::spawn_blocking(move || trash_remote_project(&clones, &id))
            .await
            .map_err(blocking_error)?
            .map(|_| ())
    }
}
