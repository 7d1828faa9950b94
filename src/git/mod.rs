//! Magenta's `GitClient` for a container environment: the state of the repository the
//! environment works in, read by running git inside the container.

mod git_client;
mod git_command;
mod git_state;

pub use git_client::{GitClient, GitClientOptions, GIT_TIMEOUT};
pub use git_state::{
    branch, head, repo_root, status_counts, GitState, StatusCounter, StatusCounts,
};
