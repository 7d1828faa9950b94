//! `Workspaces::export`: the session's work written as a branch of its project (see
//! `crate::delivery::export`), default `session/<sessionId>`; the snapshot commit of
//! uncommitted work is by the project's configured git user, else the library.

use std::path::PathBuf;

use super::workspaces::{blocking_error, Workspaces};
use crate::delivery::{self, Author, ExportOptions, Exported, Limits};
use crate::error::Result;

/// What the caller asks of `export`; absent fields take the defaults above.
#[derive(Debug, Clone, Default)]
pub struct ExportRequest {
    pub branch: Option<String>,
    pub uncommitted: bool,
    pub message: Option<String>,
    pub force: bool,
}

/// The branch a session's work goes to when the caller names none.
pub fn default_branch(session_id: &str) -> String {
    format!("session/{session_id}")
}

/// The snapshot message when the caller gives none.
pub fn default_message(session_id: &str) -> String {
    format!("Uncommitted work of session {session_id}\n\nSnapshot taken by container-isolation.")
}

/// The project's git user (its own config, the user's, the system's), else the library.
pub fn author_for(project: &std::path::Path) -> Author {
    let configured = git2::Repository::open(project)
        .and_then(|r| r.signature())
        .ok()
        .and_then(|s| Some((s.name().ok()?.to_string(), s.email().ok()?.to_string())));
    let (name, email) = configured.unwrap_or_else(|| {
        (
            "container-isolation".to_string(),
            "container-isolation@localhost".to_string(),
        )
    });
    Author { name, email }
}

impl Workspaces {
    pub(super) fn delivery_dir(&self) -> PathBuf {
        self.options.base_dir.join("delivery")
    }

    /// The session's HEAD, or a snapshot of its work tree on top, as a branch of its
    /// project.
    pub async fn export(&self, session_id: &str, request: ExportRequest) -> Result<Exported> {
        let record = self.required(session_id)?;
        let opts = ExportOptions {
            branch: request.branch.unwrap_or_else(|| default_branch(session_id)),
            uncommitted: request.uncommitted,
            message: request
                .message
                .unwrap_or_else(|| default_message(session_id)),
            force: request.force,
        };
        let staging = self.delivery_dir();
        tokio::task::spawn_blocking(move || {
            let project = PathBuf::from(&record.project_dir);
            let author = author_for(&project);
            delivery::export(
                PathBuf::from(&record.clone_path),
                project,
                staging,
                opts,
                author,
                Limits::default(),
            )
        })
        .await
        .map_err(blocking_error)?
    }
}
