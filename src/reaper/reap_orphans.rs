//! `reapOrphans`: one pass over this base directory's containers (and, once clones exist,
//! their clones), safe to run from several processes at once.

use std::collections::HashSet;
use std::path::PathBuf;

use super::reap::reap_containers;
use crate::engine::{Engine, EngineOptions};
use crate::error::Result;

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
    Ok(ReapReport {
        containers_removed: containers.removed,
        clones_trashed: Vec::new(),
        kept: containers.kept,
    })
}
