//! The engines on which this process created `process`-lifetime containers, so that exit
//! hooks know whether there is anything to clean up, and where (the reaper's
//! `cleanup_blocking`).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use crate::engine::EngineOptions;

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

/// Every engine noted so far.
pub fn process_engines() -> Vec<EngineOptions> {
    registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .cloned()
        .collect()
}
