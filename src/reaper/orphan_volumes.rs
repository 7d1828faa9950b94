//! The named volumes of `volume` sessions (labelled as ours, with this base directory)
//! whose session is gone: no container of theirs is left, and either the caller's active
//! sessions leave theirs out, or no workspace record names them (trashed by this pass, or
//! never saved) and the process that made them is gone (one still alive may be making the
//! session; one on another host cannot be judged). A record names a volume by its session
//! label, or by the volume's name: a claimed warm pool member's volume is labelled with the
//! member's names, and its session's record names it.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use crate::engine::Engine;
use crate::error::{ErrorCode, Result};
use crate::runtime::{labels, OwnerIdentity};
use crate::runtime::{owner_status, OwnerStatus};
use crate::workspace::{load_record, session_ids};
use crate::workspace_volume::{labelled_volumes, remove_volume};

async fn container_exists(engine: &Engine, name: &str) -> Result<bool> {
    match engine.inspect_container(name, name).await {
        Ok(_) => Ok(true),
        Err(err) if err.code == ErrorCode::ContainerNotFound => Ok(false),
        Err(err) => Err(err),
    }
}

/// The session of each volume a workspace record of `base_dir` names.
fn named_volumes(base_dir: &Path) -> Result<HashMap<String, String>> {
    let mut named = HashMap::new();
    for session in session_ids(base_dir)? {
        if let Some(volume) = load_record(base_dir, &session)
            .ok()
            .flatten()
            .and_then(|r| r.volume)
        {
            named.insert(volume, session);
        }
    }
    Ok(named)
}

fn is_orphan(
    base_dir: &Path,
    (name, labels_of): (&str, &HashMap<String, String>),
    named_volumes: &HashMap<String, String>,
    active: Option<&HashSet<String>>,
) -> Result<bool> {
    let labelled = labels_of.get(labels::SESSION).map(String::as_str);
    let container = labels_of.get(labels::CONTAINER).map(String::as_str);
    let by_name = named_volumes.get(name).map(String::as_str);
    // The labelled session's record is read only when no record names the volume already.
    let named = by_name.is_some()
        || labelled
            .and_then(|s| load_record(base_dir, s).ok().flatten())
            .is_some_and(|r| r.volume.is_some() && Some(r.container_id.as_str()) == container);
    let session = by_name.or(labelled);
    let inactive = active.is_some_and(|a| !session.is_some_and(|s| a.contains(s)));
    if named || inactive {
        return Ok(inactive);
    }
    Ok(owner_status(labels_of, OwnerIdentity::current()) == OwnerStatus::Gone)
}

/// Removes (or, in a dry run, lists) this base directory's orphaned session volumes.
pub async fn reap_volumes(
    engine: &Engine,
    base_dir: &Path,
    active: Option<&HashSet<String>>,
    dry_run: bool,
) -> Result<Vec<String>> {
    let filters = [
        format!("{}=true", labels::MANAGED),
        format!("{}={}", labels::BASE_DIR, base_dir.to_string_lossy()),
        labels::CONTAINER.to_string(),
    ];
    let named = named_volumes(base_dir)?;
    let mut removed = Vec::new();
    for (name, labels_of) in labelled_volumes(engine, &filters).await? {
        let container = labels_of
            .get(labels::CONTAINER)
            .cloned()
            .unwrap_or_default();
        if !container.is_empty() && container_exists(engine, &container).await? {
            continue;
        }
        if !is_orphan(base_dir, (&name, &labels_of), &named, active)? {
            continue;
        }
        if !dry_run {
            if let Err(err) = remove_volume(engine, &name).await {
                tracing::warn!("volume '{name}': not removed: {err}");
                continue;
            }
        }
        removed.push(name);
    }
    Ok(removed)
}
