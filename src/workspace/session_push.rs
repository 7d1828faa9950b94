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

impl PushRequest {
    /// What `delivery::push` is given for `session_id`: the caller's, else the defaults.
    pub fn options(self, session_id: &str) -> PushOptions {
        PushOptions {
            transfer: self.transfer,
            branch: self.branch.unwrap_or_else(|| default_branch(session_id)),
            force: self.force,
            uncommitted: self.uncommitted,
            message: self.message.unwrap_or_else(|| default_message(session_id)),
        }
    }
}

impl Workspaces {
    /// The session's HEAD, or a snapshot of its work tree on top, pushed to the remote.
    pub async fn push(&self, session_id: &str, request: PushRequest) -> Result<Pushed> {
        let opts = request.options(session_id);
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
