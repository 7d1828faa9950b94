//! The engines on which this process created `process`-lifetime containers, so that exit
//! hooks know whether there is anything to clean up, and where.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use super::reap::remove_own_process_containers;
use crate::engine::{detect, EngineOptions};
use crate::runtime::OwnerIdentity;

fn registry() -> &'static Mutex<HashSet<EngineOptions>> {
    static REGISTRY: OnceLock<Mutex<HashSet<EngineOptions>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

pub fn note_process_container(engine: &EngineOptions) {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(engine.clone());
}

pub fn has_process_containers() -> bool {
    !registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_empty()
}

/// Removes this process's `process` containers on every engine it used, within `limit`;
/// never fails (it runs while the process exits). Returns the names removed.
pub fn cleanup_blocking(limit: Duration) -> Vec<String> {
    let engines: Vec<EngineOptions> = registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .cloned()
        .collect();
    if engines.is_empty() {
        return Vec::new();
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    let owner = OwnerIdentity::current().clone();
    runtime.block_on(async move {
        let work = async {
            let mut removed = Vec::new();
            for options in engines {
                let Ok(engine) = detect(&options).await else {
                    continue;
                };
                if let Ok(mut names) = remove_own_process_containers(&engine, &owner).await {
                    removed.append(&mut names);
                }
            }
            removed
        };
        tokio::time::timeout(limit, work).await.unwrap_or_default()
    })
}
