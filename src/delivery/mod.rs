//! Delivery (docs/contract.md §6): where a session starts, what it changed, and its work
//! brought into the project (`export`) or sent to a remote (`push`), the clone read as
//! hostile input throughout. Plain Rust over libgit2, no N-API; this file is the module's
//! one door.

mod assemble;
mod blob_sizes;
mod bounded_diff;
mod bounded_thread;
mod branch_name;
mod changes;
mod commits;
mod export;
mod file_changes;
mod hostile_repo;
mod limits;
mod memory_repo;
mod new_tree_check;
mod object_import;
mod object_walk;
mod pack_file;
mod patch_text;
mod push;
mod renames;
mod snapshot;
mod staging;
mod start_ref;
mod uncommitted_patch;
mod unloaded_blobs;
mod worktree_changes;
mod worktree_entry;
mod worktree_tree;
mod write_pause;

#[cfg(test)]
mod tests;

pub use assemble::Author;
pub use bounded_thread::run_bounded;
pub use changes::{changes, read_changes, BaseKind, Changes, ChangesOptions};
pub use commits::CommitInfo;
pub use export::{export, ExportOptions, Exported};
pub use file_changes::{FileChange, FileStatus};
pub use hostile_repo::open_clone;
pub use limits::{exceeded, Deadline, Limits};
pub use memory_repo::memory_repo;
pub use object_import::import_objects;
pub use patch_text::DEFAULT_MAX_PATCH_BYTES;
pub use push::{push, PushOptions, Pushed};
pub use snapshot::{snapshot, CommitAs};
pub use start_ref::{resolve_start, validate_ref};
pub use worktree_changes::WorktreeChange;
