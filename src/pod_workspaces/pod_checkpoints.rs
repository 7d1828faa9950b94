//! A Pod session's checkpoints: its repository only (HEAD, branch, index, work tree), read
//! back from the Pod first and kept in the session's store as on an engine. A node has no
//! image commit the host can reach, so the Pod's other files are not kept: a restore or a
//! fork makes the Pod afresh from the session's image and gives it the restored clone.

use std::path::PathBuf;

use super::pod_names::pod_name;
use super::pod_sessions::{blocking_error, PodWorkspaces};
use crate::checkpoint::{
    fork_checkpoint, restore_checkpoint, take_checkpoint, trash_store, validate_checkpoint_id,
    CheckpointRecord, CheckpointStore, ForkRequest, RestoreRequest, TakeRequest,
};
use crate::clone::{branch_name, validate_session_id};
use crate::container_runtime::ContainerRuntime;
use crate::delivery::Limits;
use crate::error::{Error, ErrorCode, Result};
use crate::progress::Progress;
use crate::runtime::Lifetime;
use crate::workspace::{
    load_record, owner_for, save_record, ForkWorkspace, WorkspaceInfo, WorkspaceRecord,
};

impl PodWorkspaces {
    /// A checkpoint of the session's repository now, its Pod's workspace read back first.
    pub async fn checkpoint(
        &self,
        session_id: &str,
        label: Option<String>,
    ) -> Result<CheckpointRecord> {
        let record = self.required(session_id)?;
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        self.checkpoint_locked(&record, label).await
    }

    async fn checkpoint_locked(
        &self,
        record: &WorkspaceRecord,
        label: Option<String>,
    ) -> Result<CheckpointRecord> {
        self.read_back_running(record).await?;
        let take = TakeRequest {
            base_dir: self.base.clone(),
            session: record.session_id.clone(),
            clone: PathBuf::from(&record.clone_path),
            label,
            limits: Limits::default(),
        };
        let taken = tokio::task::spawn_blocking(move || take_checkpoint(take))
            .await
            .map_err(blocking_error)??;
        CheckpointStore::open(&self.base, &record.session_id)?
            .keep_at_most(self.max_checkpoints)?;
        Ok(taken)
    }

    /// The session's checkpoints, oldest first.
    pub fn checkpoints(&self, session_id: &str) -> Result<Vec<CheckpointRecord>> {
        self.required(session_id)?;
        CheckpointStore::list_of(&self.base, session_id)
    }

    /// Deletes a checkpoint; false when the session has no such checkpoint.
    pub fn delete_checkpoint(&self, session_id: &str, id: &str) -> Result<bool> {
        self.required(session_id)?;
        validate_checkpoint_id(id)?;
        match CheckpointStore::existing(&self.base, session_id)? {
            Some(store) if store.get(id).is_ok() => store.delete(id),
            _ => Ok(false),
        }
    }

    /// Puts the session back to checkpoint `id`: its Pod removed (what ran in it ended), the
    /// clone restored, a new Pod given it; the session's id, egress and limits kept.
    pub async fn restore(&self, session_id: &str, id: &str) -> Result<WorkspaceInfo> {
        let record = self.required(session_id)?;
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        CheckpointStore::find(&self.base, session_id, id)?;
        match self.runtime.remove(&record.container_id).await {
            Err(err) if err.code != ErrorCode::ContainerNotFound => return Err(err),
            _ => {}
        }
        let request = RestoreRequest {
            base_dir: self.base.clone(),
            session: session_id.to_string(),
            clone: PathBuf::from(&record.clone_path),
            checkpoint: id.to_string(),
            limits: Limits::default(),
        };
        tokio::task::spawn_blocking(move || restore_checkpoint(request))
            .await
            .map_err(blocking_error)??;
        self.bring_up(&record, &Progress::none()).await?;
        self.info(record).await
    }

    /// A new session from one of `session_id`'s checkpoints (or from it as it is now,
    /// through a checkpoint taken for the fork): its own clone and Pod, the parent's image,
    /// egress, limits and lifetime.
    pub async fn fork(&self, session_id: &str, request: ForkWorkspace) -> Result<WorkspaceInfo> {
        validate_session_id(&request.session_id)?;
        if load_record(&self.base, &request.session_id)?.is_some() {
            return Err(Error::new(
                ErrorCode::Eexist,
                format!("session '{}' exists already", request.session_id),
            ));
        }
        let parent = self.required(session_id)?;
        let checkpoint = match &request.checkpoint {
            Some(id) => CheckpointStore::find(&self.base, session_id, id)?,
            None => {
                let lock = self.lock_for(session_id);
                let _guard = lock.lock().await;
                let label = Some(format!("fork {}", request.session_id));
                self.checkpoint_locked(&parent, label).await?
            }
        };
        let new = request.session_id.clone();
        let lock = self.lock_for(&new);
        let _guard = lock.lock().await;
        let new_clone = self.clones.clone_path(&new)?;
        let fork = ForkRequest {
            base_dir: self.base.clone(),
            session: session_id.to_string(),
            checkpoint: checkpoint.id,
            new_clone: new_clone.clone(),
            new_branch: format!("refs/heads/{}", branch_name(&new)),
            limits: Limits::default(),
        };
        tokio::task::spawn_blocking(move || fork_checkpoint(fork))
            .await
            .map_err(blocking_error)??;
        let lifetime = Lifetime::parse(&parent.lifetime).unwrap_or_default();
        let record = WorkspaceRecord {
            session_id: new.clone(),
            clone_path: new_clone.to_string_lossy().into_owned(),
            branch_name: branch_name(&new),
            container_id: pod_name(&self.base, &new),
            created_at_ms: chrono::Utc::now().timestamp_millis(),
            owner: owner_for(lifetime),
            ..parent.clone()
        };
        if let Some(egress) = self.egress_of(&parent) {
            self.egress_set.remember(&new, egress);
        }
        if let Err(err) = self.bring_up(&record, &Progress::none()).await {
            let _ = self.runtime.remove(&record.container_id).await;
            let clones = self.clones.clone();
            let _ = tokio::task::spawn_blocking(move || clones.remove_session_clone(&new)).await;
            return Err(err);
        }
        save_record(&self.base, &record)?;
        self.info(record).await
    }

    /// A destroyed session's checkpoint store, to trash.
    pub(super) async fn trash_checkpoints(&self, session_id: &str) -> Result<()> {
        let (clones, id) = (self.clones.clone(), session_id.to_string());
        tokio::task::spawn_blocking(move || trash_store(&clones, &id))
            .await
            .map_err(blocking_error)??;
        Ok(())
    }
}
