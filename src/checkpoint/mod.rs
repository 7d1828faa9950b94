//! Checkpoints of a session (issue 38, the core): its clone's HEAD, branch, index and work
//! tree kept in a store the host owns, its container committed into a labelled image,
//! both taken with the container paused; a clone put back to a checkpoint, and a new
//! clone forked from one. Plain Rust, no N-API; this file is the module's one door.

mod checkpoint_record;
mod checkpoint_store;
mod clone_git_dir;
mod container_image;
mod fork;
mod git_dir_rebuild;
mod restore;
mod take;
mod worktree_write;

#[cfg(test)]
mod tests;

pub use checkpoint_record::CheckpointRecord;
pub use checkpoint_store::{
    trash_store, validate_checkpoint_id, CheckpointCommits, CheckpointStore,
};
pub use container_image::{
    checkpoint_images, checkpoint_labels, checkpoint_session, commit_container,
    remove_checkpoint_image, restore_image, CheckpointImage, CHECKPOINT_REPO,
};
pub use fork::{fork_checkpoint, fork_current, ForkRequest};
pub use restore::{restore_checkpoint, RestoreRequest, Restored};
pub use take::{take_checkpoint, TakeRequest};
