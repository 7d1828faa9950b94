//! Session clones with libgit2 (docs/contract.md §5): no git CLI at run time; a session's
//! own project when it has none to clone as it is (a remote's clone, a plain folder's
//! snapshot).

mod clone_manager;
mod folder_entries;
mod folder_snapshot;
mod folder_tree;
mod ignore_rules;
mod object_copy;
mod project_repo;
mod remote_project;
mod session_id;

pub use clone_manager::{branch_name, CloneManager};
pub use folder_snapshot::snapshot_folder;
pub use folder_tree::SnapshotLimits;
pub use project_repo::has_own_commit;
pub use remote_project::{
    clone_remote_project, remote_project_path, remove_session_clone_and_project,
    trash_remote_project,
};
pub use session_id::validate_session_id;
