//! Orphan cleanup: which containers (and session volumes) have lost their owner, and removing them safely
//! (docs/contract.md §6).

mod checkpoint_images;
mod exit_cleanup;
mod orphan_volumes;
mod probe_volumes;
mod process_clones;
mod reap;
mod reap_orphans;
mod watchdog;

pub use exit_cleanup::cleanup_blocking;
pub use orphan_volumes::reap_volumes;
pub use process_clones::{owner_gone, trash_session};
pub use reap::{is_orphan, reap_containers, remove_own_process_containers, ContainerReap};
pub use reap_orphans::{reap_orphans, ReapOptions, ReapReport};
pub use watchdog::{watch_owner, POLL as WATCHDOG_POLL};
