//! Delivery (docs/contract.md §6, `changes`): where a session starts and what it changed,
//! read from its clone as hostile input. Plain Rust over libgit2, no N-API; this file is
//! the module's one door.

mod blob_sizes;
mod bounded_diff;
mod changes;
mod commits;
mod file_changes;
mod hostile_repo;
mod limits;
mod patch_text;
mod renames;
mod start_ref;
mod worktree_changes;

#[cfg(test)]
mod tests;

pub use changes::{changes, read_changes, BaseKind, Changes, ChangesOptions};
pub use commits::CommitInfo;
pub use file_changes::{FileChange, FileStatus};
pub use hostile_repo::open_clone;
pub use limits::Limits;
pub use patch_text::DEFAULT_MAX_PATCH_BYTES;
pub use start_ref::{resolve_start, validate_ref};
pub use worktree_changes::WorktreeChange;
