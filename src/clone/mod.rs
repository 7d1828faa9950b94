//! Session clones with libgit2 (docs/contract.md §5): no git CLI at run time.

mod clone_manager;
mod object_copy;
mod project_repo;
mod remote_project;
mod session_id;

pub use clone_manager::{branch_name, CloneManager};
pub use remote_project::{clone_remote_project, remote_project_path, trash_remote_project};
pub use session_id::validate_session_id;
