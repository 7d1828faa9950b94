//! `Workspaces.push` (docs/contract.md §6): converts options and the result; the work is
//! `crate::delivery`'s, the transports `crate::git_transport`'s.

use napi_derive::napi;

use super::error::Outcome;
use super::git_remote::{transfer_from, GitCredentials};
use super::workspace_sessions::Sessions;
use super::workspaces::Workspaces;
use crate::delivery::Pushed;
use crate::workspace::PushRequest;

/// Options of `Workspaces.push`.
#[napi(object, object_to_js = false)]
pub struct PushOptions {
    /// The remote: `https://`, `http://` (credentials only to a loopback host), `ssh://`,
    /// `user@host:path`, `file://` or an absolute path. Never taken from the clone.
    pub url: String,
    /// The remote branch written (default `session/<sessionId>`).
    pub branch: Option<String>,
    /// For this push only; never written anywhere, never in the container.
    pub credentials: Option<GitCredentials>,
    /// PEM certificate(s) trusted for HTTPS in addition to the system's roots.
    pub ca_certificate: Option<String>,
    /// The transfer's time bound (default 600000).
    pub timeout_ms: Option<f64>,
    /// Push a snapshot of the session's uncommitted work on top of its HEAD.
    pub uncommitted: Option<bool>,
    /// The snapshot commit's message.
    pub message: Option<String>,
    /// Replace the remote branch even when it is not an ancestor (`+` refspec).
    pub force: Option<bool>,
}

/// What `Workspaces.push` sent.
#[napi(object)]
pub struct SessionPush {
    /// The remote, as given.
    pub url: String,
    /// The remote branch's short name.
    pub branch: String,
    /// Its full ref, `refs/heads/<branch>`.
    pub reference: String,
    /// The commit it points at now: the snapshot, else the session's HEAD.
    pub commit: String,
    /// The session's HEAD.
    pub head: String,
    /// The snapshot commit of uncommitted work, when one was made.
    pub snapshot: Option<String>,
}

fn result(url: String, p: Pushed) -> SessionPush {
    SessionPush {
        url,
        branch: p
            .reference
            .strip_prefix("refs/heads/")
            .unwrap_or(&p.reference)
            .to_string(),
        reference: p.reference,
        commit: p.commit.to_string(),
        head: p.head.to_string(),
        snapshot: p.snapshot.map(|o| o.to_string()),
    }
}

#[napi]
impl Workspaces {
    /// Pushes the session's HEAD (or, with `uncommitted`, a snapshot of its work tree on
    /// top) from the host to `url`'s `branch`, with libgit2 and the credentials given here:
    /// the clone's remotes, `pushurl`, `insteadOf` and credential helpers are never read,
    /// and nothing reaches the container. Rejections: `GIT_AUTH` (credentials refused),
    /// `GIT_PUSH_REJECTED` (not a fast-forward without `force`, or a server rule),
    /// `INVALID_ARGUMENT` (URL, branch, credentials that would travel in clear), `TIMEOUT`,
    /// and the clone's bounds as for `export`.
    #[napi(ts_return_type = "Promise<SessionPush>")]
    pub async fn push(&self, session_id: String, opts: PushOptions) -> Outcome<SessionPush> {
        async move {
            let url = opts.url.clone();
            let request = PushRequest {
                transfer: transfer_from(
                    &opts.url,
                    opts.credentials,
                    opts.ca_certificate,
                    opts.timeout_ms,
                )?,
                branch: opts.branch,
                uncommitted: opts.uncommitted.unwrap_or(false),
                message: opts.message,
                force: opts.force.unwrap_or(false),
            };
            match &self.sessions {
                Sessions::Engine(inner) => inner.push(&session_id, request).await,
                Sessions::Pods(pods) => pods.push(&session_id, request).await,
            }
            .map(|p| result(url, p))
        }
        .await
        .into()
    }
}
