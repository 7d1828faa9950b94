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

impl ExportRequest {
    /// What `delivery::export` is given for `session_id`: the caller's, else the defaults.
    pub fn options(self, session_id: &str) -> ExportOptions {
        ExportOptions {
            branch: self.branch.unwrap_or_else(|| default_branch(session_id)),
            uncommitted: self.uncommitted,
            message: self.message.unwrap_or_else(|| default_message(session_id)),
            force: self.force,
        }
    }
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

/// What a delivery call works with: the session's clone and project, the staging root,
/// and the author of a snapshot.
pub(super) struct Delivery {
    pub clone: PathBuf,
    pub project: PathBuf,
    pub staging: PathBuf,
    pub author: Author,
}

impl Workspaces {
    /// Runs `work` on a blocking thread with the session's delivery inputs.
    pub(super) async fn deliver<T: Send + 'static>(
        &self,
        session_id: &str,
        work: impl FnOnce(Delivery) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let record = self.required(session_id)?;
        let lock = self.read_lock(session_id);
        let _reading = lock.lock().await;
        self.read_back(&record).await?;
        let staging = self.options.base_dir.join("delivery");
        tokio::task::spawn_blocking(move || {
            let project = PathBuf::from(&record.project_dir);
            work(Delivery {
                clone: PathBuf::from(&record.clone_path),
                author: author_for(&project),
                project,
                staging,
            })
        })
        .await
        .map_err(blocking_error)?
    }

    /// The session's HEAD, or a snapshot of its work tree on top, as a branch of its
    /// project.
    pub async fn export(&self, session_id: &str, request: ExportRequest) -> Result<Exported> {
        let opts = request.options(session_id);
        self.deliver(session_id, move |d| {
            delivery::export(
                d.clone,
                d.project,
                d.staging,
                opts,
                d.author,
                Limits::default(),
            )
        })
        .await
    }
}
