//! What a session on a cluster delivers: its changes, its work as a branch of its project,
//! and its work pushed to a remote — each read from the host clone after the Pod's
//! workspace was read back into it (see `crate::delivery`).

use std::path::PathBuf;

use super::pod_sessions::{blocking_error, PodWorkspaces};
use crate::delivery::{self, Author, Changes, ChangesOptions, Exported, Limits, Pushed};
use crate::error::Result;
use crate::workspace::{author_for, base_of, ExportRequest, PushRequest};

impl PodWorkspaces {
    /// The session's commits, changed files and uncommitted work since its base.
    pub async fn changes(&self, session_id: &str, opts: ChangesOptions) -> Result<Changes> {
        let record = self.read_session(session_id).await?;
        let base = base_of(&record)?;
        let clone = PathBuf::from(&record.clone_path);
        tokio::task::spawn_blocking(move || delivery::changes(clone, base, opts, Limits::default()))
            .await
            .map_err(blocking_error)?
    }

    /// The session's work as a branch of its project (`session/<id>` by default).
    pub async fn export(&self, session_id: &str, request: ExportRequest) -> Result<Exported> {
        let opts = request.options(session_id);
        self.deliver(session_id, move |clone, project, staging, author| {
            delivery::export(clone, project, staging, opts, author, Limits::default())
        })
        .await
    }

    /// The session's HEAD, or a snapshot of its work tree on top, pushed to the remote.
    pub async fn push(&self, session_id: &str, request: PushRequest) -> Result<Pushed> {
        let opts = request.options(session_id);
        self.deliver(session_id, move |clone, project, staging, author| {
            delivery::push(clone, project, staging, opts, author, Limits::default())
        })
        .await
    }

    /// Runs `work` on a blocking thread with the session's clone (read back first), its
    /// project, the staging root and the project's author.
    async fn deliver<T: Send + 'static>(
        &self,
        session_id: &str,
        work: impl FnOnce(PathBuf, PathBuf, PathBuf, Author) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let record = self.read_session(session_id).await?;
        let staging = self.base.join("delivery");
        tokio::task::spawn_blocking(move || {
            let project = PathBuf::from(&record.project_dir);
            let author = author_for(&project);
            work(PathBuf::from(&record.clone_path), project, staging, author)
        })
        .await
        .map_err(blocking_error)?
    }
}
