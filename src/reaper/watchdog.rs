//! The watchdog: a detached process that outlives its owner, notices the owner's death
//! (even by SIGKILL), removes the owner's `process`-lifetime containers and exits. No
//! privileged helper container is involved.

use std::time::Duration;

use super::reap::remove_own_process_containers;
use crate::engine::{detect, EngineOptions};
use crate::runtime::{labels, OwnerIdentity};
use crate::runtime::{owner_status, OwnerStatus};

/// How often the watchdog looks at its owner.
pub const POLL: Duration = Duration::from_millis(250);

/// Blocks until `owner` is gone, then cleans up on each engine. Returns the names removed.
pub fn watch_owner(owner: OwnerIdentity, engines: Vec<EngineOptions>) -> Vec<String> {
    let as_labels: std::collections::HashMap<String, String> = labels::owner_labels(&owner)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let me = OwnerIdentity::current();
    // An owner this process cannot judge (unknown) is not watched: nothing would end it.
    while owner_status(&as_labels, me) == OwnerStatus::Alive {
        std::thread::sleep(POLL);
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    runtime.block_on(async {
        let mut removed = Vec::new();
        for options in engines {
            // The engine may be restarting just now: retry for a while.
            for _ in 0..20 {
                match detect(&options).await {
                    Ok(engine) => {
                        if let Ok(mut names) = remove_own_process_containers(&engine, &owner).await
                        {
                            removed.append(&mut names);
                            break;
                        }
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
                }
            }
        }
        removed
    })
}
