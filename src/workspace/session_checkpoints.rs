//! A session's checkpoints (`crate::checkpoint`) as `Workspaces` offers them: taken with
//! the session's container paused (its clone — a volume session's read back into it first —
//! and its container's own changes together), at
//! most `KEEP_CHECKPOINTS` kept, oldest dropped first; a restore that ends what runs in the
//! session, puts the clone back and makes the container again from the checkpoint's image
//! (its id, egress policy, limits and forwarded ports kept); a fork that makes a new,
//! independent session from a checkpoint (one taken for it when none is named).

use std::path::PathBuf;

use super::session_volume::session_volume;
use super::workspace_record::{self as record, owner_for, WorkspaceRecord};
use super::workspace_storage::{volume_name, Storage};
use super::workspaces::{blocking_error, WorkspaceInfo, Workspaces};
use crate::checkpoint::{
    checkpoint_images, checkpoint_session, fork_checkpoint, remove_checkpoint_image,
    restore_checkpoint, restore_image, trash_store, validate_checkpoint_id, CheckpointRecord,
    CheckpointStore, ForkRequest, RestoreRequest, TakeRequest,
};
use crate::clone::{branch_name, validate_session_id};
use crate::container_runtime::ContainerRuntime;
use crate::delivery::Limits;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::Lifetime;
use crate::workspace_volume::remove_volume;

/// Checkpoints a session keeps unless `maxCheckpoints` says; a new one past it drops the oldest.
pub const KEEP_CHECKPOINTS: usize = 20;

/// `fork`'s request: the new session's id, and the checkpoint to start from (else the
/// session as it is now, through a checkpoint taken for the fork).
#[derive(Debug, Clone, Default)]
pub struct ForkWorkspace {
    pub session_id: String,
    pub checkpoint: Option<String>,
}

impl Workspaces {
    fn store(&self, session_id: &str) -> Result<Option<CheckpointStore>> {
        CheckpointStore::existing(std::path::Path::new(&self.options.base_dir), session_id)
    }

    fn checkpoint_record(&self, session_id: &str, id: &str) -> Result<CheckpointRecord> {
        CheckpointStore::find(std::path::Path::new(&self.options.base_dir), session_id, id)
    }

    /// A checkpoint of the session now: its clone and its container, taken while the
    /// container is paused.
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
        let engine = self.runtime.engine().await?;
        let take = TakeRequest {
            base_dir: PathBuf::from(&self.options.base_dir),
            session: record.session_id.clone(),
            clone: PathBuf::from(&record.clone_path),
            label,
            limits: Limits::default(),
        };
        // A volume session's repository comes back to the clone inside the pause, through a
        // reader container beside the paused one.
        let reading = self.read_lock(&record.session_id);
        let _reading = reading.lock().await;
        let before = self.read_back_beside(record);
        checkpoint_session(
            &engine,
            &record.container_id,
            take,
            self.options.max_checkpoints.unwrap_or(KEEP_CHECKPOINTS),
            before,
        )
        .await
    }

    /// The session's checkpoints, oldest first.
    pub fn checkpoints(&self, session_id: &str) -> Result<Vec<CheckpointRecord>> {
        self.required(session_id)?;
        CheckpointStore::list_of(std::path::Path::new(&self.options.base_dir), session_id)
    }

    /// Deletes a checkpoint and its image (kept while a fork's container still uses it);
    /// false when the session has no such checkpoint.
    pub async fn delete_checkpoint(&self, session_id: &str, id: &str) -> Result<bool> {
        self.required(session_id)?;
        validate_checkpoint_id(id)?;
        let Some(store) = self.store(session_id)? else {
            return Ok(false);
        };
        let Ok(checkpoint) = store.get(id) else {
            return Ok(false);
        };
        let deleted = store.delete(id)?;
        if let Some(image) = checkpoint.image {
            let engine = self.runtime.engine().await?;
            remove_checkpoint_image(&engine, &image).await?;
        }
        Ok(deleted)
    }

    /// Puts the session back to checkpoint `id`: what runs in it is ended (its container
    /// removed), the clone restored, the container made again from the checkpoint's image.
    pub async fn restore(&self, session_id: &str, id: &str) -> Result<WorkspaceInfo> {
        let mut record = self.required(session_id)?;
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        let checkpoint = self.checkpoint_record(session_id, id)?;
        let image = restore_image(&checkpoint)?.to_string();
        let engine = self.runtime.engine().await?;
        self.probes.forget(&record.container_id);
        match self.runtime.remove(&record.container_id).await {
            Err(err) if err.code != ErrorCode::ContainerNotFound => return Err(err),
            _ => {}
        }
        // A volume session's volume is made again from the restored clone.
        if let Some(volume) = session_volume(&record)? {
            remove_volume(&engine, volume).await?;
        }
        let request = RestoreRequest {
            base_dir: PathBuf::from(&self.options.base_dir),
            session: session_id.to_string(),
            clone: PathBuf::from(&record.clone_path),
            checkpoint: id.to_string(),
            limits: Limits::default(),
        };
        tokio::task::spawn_blocking(move || restore_checkpoint(request))
            .await
            .map_err(blocking_error)??;
        record.checkpoint_image = Some(image);
        record::save(&self.options.base_dir, &record)?;
        let lifetime = Lifetime::parse(&record.lifetime).unwrap_or_default();
        self.session_container(&engine, &record)?
            .create(lifetime)
            .await?;
        self.retarget_forwards(&record).await?;
        self.forward_configured(&record).await?;
        self.info(record).await
    }

    /// A new session from one of `session_id`'s checkpoints (or from it as it is now): its
    /// own clone and container, nothing writable shared with the first.
    pub async fn fork(&self, session_id: &str, request: ForkWorkspace) -> Result<WorkspaceInfo> {
        validate_session_id(&request.session_id)?;
        let base = self.options.base_dir.clone();
        if record::load(&base, &request.session_id)?.is_some() {
            return Err(Error::new(
                ErrorCode::Eexist,
                format!("session '{}' exists already", request.session_id),
            ));
        }
        let parent = self.required(session_id)?;
        let checkpoint = match &request.checkpoint {
            Some(id) => self.checkpoint_record(session_id, id)?,
            None => {
                let lock = self.lock_for(session_id);
                let _guard = lock.lock().await;
                let label = Some(format!("fork {}", request.session_id));
                self.checkpoint_locked(&parent, label).await?
            }
        };
        let image = restore_image(&checkpoint)?.to_string();
        let new = request.session_id.clone();
        let lock = self.lock_for(&new);
        let _guard = lock.lock().await;
        let new_clone = self.clones.clone_path(&new)?;
        let fork = ForkRequest {
            base_dir: PathBuf::from(&base),
            session: session_id.to_string(),
            checkpoint: checkpoint.id.clone(),
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
            container_id: self.container_name(&new),
            volume: (parent.storage == Storage::Volume)
                .then(|| volume_name(&self.container_name(&new))),
            created_at_ms: chrono::Utc::now().timestamp_millis(),
            owner: owner_for(lifetime),
            checkpoint_image: Some(image),
            settings: parent.settings.as_ref().map(|s| s.with_clone(&new_clone)),
            ..parent.clone()
        };
        if let Some(egress) = self.egress_of(&parent) {
            self.egress.remember(&new, egress);
        }
        let engine = self.runtime.engine().await?;
        let made = self
            .session_container(&engine, &record)?
            .create(lifetime)
            .await;
        if let Err(err) = made {
            let clones = self.clones.clone();
            let id = new.clone();
            let _ = tokio::task::spawn_blocking(move || clones.remove_session_clone(&id)).await;
            return Err(err);
        }
        record::save(&base, &record)?;
        self.forward_configured(&record).await?;
        self.info(record).await
    }

    /// A destroyed session's checkpoints: its store to trash, its images removed (one a
    /// fork's container still uses, or one a crash left without its store, stays until
    /// `reapOrphans` finds it unused).
    pub(super) async fn trash_checkpoints(&self, session_id: &str) -> Result<()> {
        let clones = self.clones.clone();
        let id = session_id.to_string();
        let trashed = tokio::task::spawn_blocking(move || trash_store(&clones, &id))
            .await
            .map_err(blocking_error)??;
        // A session never checkpointed has no store, and no image to look for on the engine.
        if trashed.is_none() {
            return Ok(());
        }
        let engine = self.runtime.engine().await?;
        let base = self.options.base_dir.to_string_lossy();
        for image in checkpoint_images(&engine, &base, Some(session_id)).await? {
            remove_checkpoint_image(&engine, &image.id).await?;
        }
        Ok(())
    }
}
