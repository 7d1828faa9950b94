//! The clones of `process` workspaces: moved to trash, with their workspace record, once the
//! process they lived as long as is gone — when its watchdog or exit hook removes their
//! containers, or when `reapOrphans` finds one with no container left.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::clone::{trash_remote_project, CloneManager};
use crate::runtime::ManagedContainer;
use crate::runtime::{labels, OwnerIdentity};
use crate::runtime::{owner_status, OwnerStatus};
use crate::workspace::{load_record, remove_record, WorkspaceRecord};

/// A `process` workspace whose recorded owner is gone (a record without an owner, from
/// before owners were recorded, cannot be judged).
pub fn owner_gone(record: &WorkspaceRecord, me: &OwnerIdentity) -> bool {
    let owner: Option<HashMap<String, String>> = record
        .owner
        .as_ref()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
    record.lifetime == "process"
        && owner.is_some_and(|labels| owner_status(&labels, me) == OwnerStatus::Gone)
}

/// Moves a session's clone (and the library's clone of its remote, for a session made from
/// a repository URL) to trash and forgets its workspace; the trash path, if a clone was
/// there.
pub fn trash_session(base_dir: &Path, session: &str) -> Option<PathBuf> {
    let clones = CloneManager::new(base_dir.to_path_buf());
    let moved = clones.remove_session_clone(session).ok().flatten()?;
    let _ = trash_remote_project(&clones, session);
    let _ = remove_record(base_dir, session);
    Some(moved)
}

/// After an owner's `process` containers were removed: trashes the clone of each whose
/// workspace record says `process` and names that container. Never fails.
pub fn trash_after_removal(removed: &[ManagedContainer]) -> Vec<PathBuf> {
    removed
        .iter()
        .filter_map(|container| {
            let base_dir = container.labels.get(labels::BASE_DIR)?;
            let session = container.session();
            let base_dir = Path::new(base_dir);
            let record = load_record(base_dir, session).ok().flatten()?;
            (record.lifetime == "process" && record.container_id == container.name)
                .then(|| trash_session(base_dir, session))
                .flatten()
        })
        .collect()
}
