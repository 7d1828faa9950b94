//! `reapOrphans` for the sessions on a cluster: the host Leases of dead processes deleted
//! (the cluster's garbage collector takes their Pods), and, as on the engines, a `process`
//! session whose owner is gone loses its Pod, its clone (to trash) and its record; with the
//! active session ids given, a `session` session not among them loses its Pod (its clone and
//! record stay, and its next `create` makes the Pod again).

use std::collections::HashSet;

use super::pod_sessions::{blocking_error, PodWorkspaces};
use crate::container_runtime::ContainerRuntime;
use crate::error::{ErrorCode, Result};
use crate::reaper::{owner_gone, trash_session};
use crate::runtime::OwnerIdentity;
use crate::workspace::{load_record, session_ids, WorkspaceRecord};

/// What `reap_orphans` did, or would do.
#[derive(Debug, Default)]
pub struct PodReapReport {
    pub pods_removed: Vec<String>,
    pub clones_trashed: Vec<String>,
    pub kept: Vec<String>,
}

impl PodWorkspaces {
    pub async fn reap_orphans(
        &self,
        active: Option<&HashSet<String>>,
        dry_run: bool,
    ) -> Result<PodReapReport> {
        if !dry_run {
            self.runtime.reap_orphans().await?;
        }
        let me = OwnerIdentity::current();
        let mut report = PodReapReport::default();
        for id in session_ids(&self.base)? {
            let Some(record) = load_record(&self.base, &id)? else {
                continue;
            };
            let gone = owner_gone(&record, me);
            let unlisted = record.lifetime == "session" && active.is_some_and(|a| !a.contains(&id));
            if !gone && !unlisted {
                report.kept.push(record.container_id);
                continue;
            }
            if !dry_run {
                self.remove_pod(&record).await?;
            }
            report.pods_removed.push(record.container_id.clone());
            if gone {
                report
                    .clones_trashed
                    .push(self.trash(record, dry_run).await?);
            }
        }
        Ok(report)
    }

    async fn remove_pod(&self, record: &WorkspaceRecord) -> Result<()> {
        let lock = self.lock_for(&record.session_id);
        let _guard = lock.lock().await;
        self.forwards.close(&record.session_id);
        match self.runtime.remove(&record.container_id).await {
            Err(err) if err.code != ErrorCode::ContainerNotFound => Err(err),
            _ => Ok(()),
        }
    }

    /// Moves the session's clone to trash and forgets it; the clone's path (its trash path
    /// where it was moved).
    async fn trash(&self, record: WorkspaceRecord, dry_run: bool) -> Result<String> {
        if dry_run {
            return Ok(record.clone_path);
        }
        let (base, id) = (self.base.clone(), record.session_id.clone());
        let moved = tokio::task::spawn_blocking(move || trash_session(&base, &id))
            .await
            .map_err(blocking_error)?;
        Ok(moved.map_or(record.clone_path, |p| p.to_string_lossy().into_owned()))
    }
}
