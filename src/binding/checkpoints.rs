//! `Workspaces`' checkpoints (docs/contract.md §6): `checkpoint`, `checkpoints`,
//! `deleteCheckpoint`, `restore` and `fork`, converted to and from JavaScript.

use napi_derive::napi;

use super::error::Outcome;
use super::workspace_info::WorkspaceInfo;
use super::workspace_sessions::Sessions;
use super::workspaces::Workspaces;
use crate::checkpoint::CheckpointRecord;
use crate::workspace::ForkWorkspace;

/// A checkpoint of a session: its clone and its container at one instant.
#[napi(object)]
pub struct CheckpointInfo {
    /// 12 hexadecimal digits.
    pub id: String,
    /// The label `checkpoint()` was given.
    pub label: Option<String>,
    /// Milliseconds since the epoch.
    pub created_at: f64,
    /// The clone's HEAD commit then.
    pub commit: String,
    /// The branch HEAD was on (absent when detached).
    pub branch: Option<String>,
    /// The container's commit: the image a restore or a fork makes the container from.
    pub image: Option<String>,
    /// What the container had changed when it was committed (its own layer), in bytes.
    pub bytes: Option<f64>,
}

impl From<CheckpointRecord> for CheckpointInfo {
    fn from(record: CheckpointRecord) -> Self {
        CheckpointInfo {
            id: record.id,
            label: record.label,
            created_at: record.created_at_ms as f64,
            commit: record.head,
            branch: record.branch,
            image: record.image,
            bytes: record.bytes.map(|b| b as f64),
        }
    }
}

/// Options of `checkpoint()`.
#[napi(object)]
pub struct CheckpointOptions {
    /// What this state is, e.g. "tests pass".
    pub label: Option<String>,
}

/// Options of `fork()`.
#[napi(object)]
pub struct ForkOptions {
    /// The new session's id.
    pub session_id: String,
    /// The checkpoint to start from; default: the session as it is now (a checkpoint is
    /// taken for the fork and kept).
    pub checkpoint: Option<String>,
}

#[napi]
impl Workspaces {
    /// A checkpoint of the session now: its clone (HEAD, branch, index, work tree with
    /// uncommitted and untracked files) and its container's own changes, taken with the
    /// container paused. The oldest past 20 is dropped. On a cluster: the repository only,
    /// read back from the Pod first.
    #[napi(ts_return_type = "Promise<CheckpointInfo>")]
    pub async fn checkpoint(
        &self,
        session_id: String,
        opts: Option<CheckpointOptions>,
    ) -> Outcome<CheckpointInfo> {
        let label = opts.and_then(|o| o.label);
        async {
            match &self.sessions {
                Sessions::Engine(inner) => inner.checkpoint(&session_id, label).await,
                Sessions::Pods(pods) => pods.checkpoint(&session_id, label).await,
            }
            .map(Into::into)
        }
        .await
        .into()
    }

    /// The session's checkpoints, oldest first.
    #[napi(ts_return_type = "Promise<CheckpointInfo[]>")]
    pub async fn checkpoints(&self, session_id: String) -> Outcome<Vec<CheckpointInfo>> {
        match &self.sessions {
            Sessions::Engine(inner) => inner.checkpoints(&session_id),
            Sessions::Pods(pods) => pods.checkpoints(&session_id),
        }
        .map(|all| all.into_iter().map(Into::into).collect())
        .into()
    }

    /// Deletes a checkpoint and its image; false when there is no such checkpoint.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub async fn delete_checkpoint(&self, session_id: String, id: String) -> Outcome<bool> {
        async {
            match &self.sessions {
                Sessions::Engine(inner) => inner.delete_checkpoint(&session_id, &id).await,
                Sessions::Pods(pods) => pods.delete_checkpoint(&session_id, &id),
            }
        }
        .await
        .into()
    }

    /// The session put back to a checkpoint: what runs in it ended, its clone and its
    /// container as they were then; its id, egress policy and limits kept. On a cluster: the
    /// clone as it was, in a new Pod of the session's image.
    #[napi(ts_return_type = "Promise<WorkspaceInfo>")]
    pub async fn restore(&self, session_id: String, id: String) -> Outcome<WorkspaceInfo> {
        async {
            match &self.sessions {
                Sessions::Engine(inner) => inner.restore(&session_id, &id).await,
                Sessions::Pods(pods) => pods.restore(&session_id, &id).await,
            }
            .map(Into::into)
        }
        .await
        .into()
    }

    /// A new, independent session from a checkpoint of this one (or from it as it is now).
    #[napi(ts_return_type = "Promise<WorkspaceInfo>")]
    pub async fn fork(&self, session_id: String, opts: ForkOptions) -> Outcome<WorkspaceInfo> {
        let request = ForkWorkspace {
            session_id: opts.session_id,
            checkpoint: opts.checkpoint,
        };
        async {
            match &self.sessions {
                Sessions::Engine(inner) => inner.fork(&session_id, request).await,
                Sessions::Pods(pods) => pods.fork(&session_id, request).await,
            }
            .map(Into::into)
        }
        .await
        .into()
    }
}
