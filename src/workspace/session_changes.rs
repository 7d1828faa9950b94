//! `Workspaces::changes`: what a session changed since its base, read from its clone on
//! the host (for a `volume` session, read back from its volume first) as hostile input
//! (see `crate::delivery`).

use std::path::PathBuf;

use super::workspace_record::WorkspaceRecord;
use super::workspaces::{blocking_error, Workspaces};
use crate::delivery::{self, Changes, ChangesOptions, Limits};
use crate::error::{Error, ErrorCode, Result};

/// The recorded base; a record from before bases were kept counts from the project's
/// HEAD now (the project is the host's, not the agent's).
pub fn base_of(record: &WorkspaceRecord) -> Result<git2::Oid> {
    if let Some(text) = &record.base_commit {
        return git2::Oid::from_str(text).map_err(|e| {
            Error::new(
                ErrorCode::Git,
                format!(
                    "session '{}': recorded base {text:?}: {}",
                    record.session_id,
                    e.message()
                ),
            )
        });
    }
    let project = git2::Repository::open(&record.project_dir).map_err(|e| {
        Error::new(
            ErrorCode::Git,
            format!("project {}: {}", record.project_dir, e.message()),
        )
    })?;
    delivery::resolve_start(&project, None)
}

impl Workspaces {
    /// The session's commits, changed files and uncommitted work since its base.
    pub async fn changes(&self, session_id: &str, opts: ChangesOptions) -> Result<Changes> {
        let record = self.required(session_id)?;
        let lock = self.read_lock(session_id);
        let _reading = lock.lock().await;
        self.read_back(&record).await?;
        tokio::task::spawn_blocking(move || {
            let base = base_of(&record)?;
            let clone = PathBuf::from(&record.clone_path);
            delivery::changes(clone, base, opts, Limits::default())
        })
        .await
        .map_err(blocking_error)?
    }
}
