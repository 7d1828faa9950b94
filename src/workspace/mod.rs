//! Session workspaces (CONTRACT §6): clone + container + devcontainer.json, persisted.

mod idle_tracker;
mod image_build;
mod lifecycle_runner;
mod workspace_record;
mod workspaces;

pub use workspace_record::{load as load_record, remove as remove_record, WorkspaceRecord};
pub use workspaces::{
    CreateWorkspace, WorkspaceEnvironment, WorkspaceInfo, Workspaces, WorkspacesOptions,
};
