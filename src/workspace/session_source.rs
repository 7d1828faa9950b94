//! Where a new session's clone comes from: the host's project directory, or a remote
//! repository cloned on the host into a project of the library's own (see
//! `crate::clone::clone_remote_project`); and that remote project sent to the trash with
//! the session.

use std::path::PathBuf;

use super::workspaces::{blocking_error, CreateWorkspace, Workspaces};
use crate::clone::{clone_remote_project, trash_remote_project};
use crate::error::{Error, ErrorCode, Result};

impl Workspaces {
    /// The project to clone and the ref to start at: for a remote, its clone on the host and
    /// the commit `ref` resolved to there.
    pub(super) async fn session_source(
        &self,
        request: &CreateWorkspace,
    ) -> Result<(PathBuf, Option<String>)> {
        let Some(transfer) = request.repository.clone() else {
            if request.project_dir.is_empty() {
                return Err(Error::invalid_argument(
                    "create needs projectDir or repository",
                ));
            }
            let project = std::fs::canonicalize(&request.project_dir).map_err(|e| {
                Error::new(
                    ErrorCode::Enoent,
                    format!("project {}: {e}", request.project_dir),
                )
            })?;
            return Ok((project, request.start_ref.clone()));
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
        Ok((project, Some(commit.to_string())))
    }

    /// Moves a session's remote project (if it has one) to the trash.
    pub(super) async fn trash_remote_project(&self, session_id: &str) -> Result<()> {
        let (clones, id) = (self.clones.clone(), session_id.to_string());
        tokio::task::spawn_blocking(move || trash_remote_project(&clones, &id))
            .await
            .map_err(blocking_error)?
            .map(|_| ())
    }
}
