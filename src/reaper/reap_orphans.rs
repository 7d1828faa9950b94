//! `reapOrphans`: one pass over this base directory's containers, then its session clones
//! and session volumes,
//! safe to run from several processes at once. Clones only ever go to trash.

use std::collections::HashSet;
use std::path::PathBuf;

use super::checkpoint_images::reap_checkpoint_images;
use super::orphan_volumes::reap_volumes;
use super::probe_volumes::reap_probe_volumes;
use super::process_clones::{owner_gone, trash_session};
use super::reap::reap_containers;
use crate::clone::CloneManager;
use crate::engine::{Engine, EngineOptions};
use crate::error::Result;
use crate::runtime::labels;
use crate::runtime::managed_containers;
use crate::runtime::OwnerIdentity;
use crate::workspace::load_record;

#[derive(Debug, Clone, Default)]
pub struct ReapOptions {
    pub base_dir: PathBuf,
    pub engine: EngineOptions,
    pub active_session_ids: Option<HashSet<String>>,
    pub dry_run: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReapReport {
    pub containers_removed: Vec<String>,
    pub clones_trashed: Vec<String>,
    pub kept: Vec<String>,
    pub volumes_removed: Vec<String>,
}

pub async fn reap_orphans(options: &ReapOptions) -> Result<ReapReport> {
    let engine = Engine::connect(&options.engine).await?;
    let base_dir = options.base_dir.to_string_lossy();
    let containers = reap_containers(
        &engine,
        &base_dir,
        options.active_session_ids.as_ref(),
        options.dry_run,
    )
    .await?;
    let orphans = orphan_clones(&engine, options, &containers.sessions).await?;
    let clones_trashed = if options.dry_run {
        let manager = CloneManager::new(options.base_dir.clone());
        orphans
            .iter()
            .filter_map(|s| manager.clone_path(s).ok())
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    } else {
        let base = options.base_dir.clone();
        tokio::task::spawn_blocking(move || trash(&base, &orphans))
            .await
            .unwrap_or_default()
    };
    let volumes_removed = reap_volumes(
        &engine,
        &options.base_dir,
        options.active_session_ids.as_ref(),
        options.dry_run,
    )
    .await?;
    // Not session volumes, so not in the report.
    reap_probe_volumes(&engine, options.dry_run).await;
    let images = reap_checkpoint_images(&engine, &options.base_dir, options.dry_run).await?;
    if !images.is_empty() {
        tracing::info!("reapOrphans: checkpoint images of gone sessions: {images:?}");
    }
    Ok(ReapReport {
        containers_removed: containers.removed,
        clones_trashed,
        kept: containers.kept,
        volumes_removed,
    })
}

/// Sessions whose clone is orphaned: none of our containers is left for it, and either the
/// caller named the active sessions and this is not one, or its workspace was of `process`
/// lifetime and this pass removed its container or its recorded owner is gone.
async fn orphan_clones(
    engine: &Engine,
    options: &ReapOptions,
    reaped_sessions: &[String],
) -> Result<Vec<String>> {
    let manager = CloneManager::new(options.base_dir.clone());
    let base_dir = options.base_dir.to_string_lossy();
    let live: HashSet<String> =
        managed_containers(engine, &[format!("{}={base_dir}", labels::BASE_DIR)])
            .await?
            .into_iter()
            // A dry run removed nothing: count its would-be removals as gone.
            .filter(|c| !(options.dry_run && reaped_sessions.iter().any(|s| s == c.session())))
            .map(|c| c.session().to_string())
            .collect();
    let me = OwnerIdentity::current();
    let mut orphans = Vec::new();
    for session in manager.list_session_clones()? {
        if live.contains(&session) {
            continue;
        }
        let inactive = options
            .active_session_ids
            .as_ref()
            .is_some_and(|active| !active.contains(&session));
        let record = load_record(&options.base_dir, &session)?;
        let process_workspace_ended = record.is_some_and(|r| {
            r.lifetime == "process" && (reaped_sessions.contains(&session) || owner_gone(&r, me))
        });
        if inactive || process_workspace_ended {
            orphans.push(session);
        }
    }
    Ok(orphans)
}

/// Moves each session's clone to trash and forgets its workspace; returns the trash paths.
fn trash(base_dir: &std::path::Path, sessions: &[String]) -> Vec<String> {
    sessions
        .iter()
        .filter_map(|session| trash_session(base_dir, session))
        .map(|moved| moved.to_string_lossy().into_owned())
        .collect()
}
