//! `Workspaces::push`: the session's work sent from the host to a remote (see
//! `crate::delivery::push`), default branch `session/<sessionId>`, with the URL and
//! credentials of the call only.

use super::session_export::{default_branch, default_message};
use super::workspaces::Workspaces;
use crate::delivery::{self, Limits, PushOptions, Pushed};
use crate::error::Result;
use crate::git_transport::Transfer;

/// What the caller asks of `push`.
#[derive(Debug, Clone)]
pub struct PushRequest {
    pub transfer: Transfer,
    pub branch: Option<String>,
    pub uncommitted: bool,
    pub message: Option<String>,
    pub force: bool,
}

impl Workspaces {
    /// The session's HEAD, or a snapshot of its work tree on top, pushed to the remote.
    pub async fn push(&self, session_id: &str, request: PushRequest) -> Result<Pushed> {
        let opts = PushOptions {
            transfer: request.transfer,
            branch: request.branch.unwrap_or_else(|| default_branch(session_id)),
            force: request.force,
            uncommitted: request.uncommitted,
            message: request
                .message
                .unwrap_or_else(|| default_message(session_id)),
        };
        self.deliver(session_id, move |d| {
            delivery::push(
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
