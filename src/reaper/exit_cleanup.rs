//! Cleanup at exit: this process's `process`-lifetime containers removed on every engine
//! it created them on (runtime's `process_engines`).

use std::time::Duration;

use super::reap::remove_own_process_containers;
use crate::engine::detect;
use crate::runtime::{process_engines, OwnerIdentity};

/// Removes this process's `process` containers on every engine it used, within `limit`;
/// never fails (it runs while the process exits). Returns the names removed.
pub fn cleanup_blocking(limit: Duration) -> Vec<String> {
    let engines = process_engines();
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
