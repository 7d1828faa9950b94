//! Session workspaces (docs/contract.md §6): clone + container + devcontainer.json under the
//! host's trust, the settings fixed at creation and stored.

mod feature_fetch;
mod feature_image;
mod feature_set;
mod feature_source;
mod host_paths;
mod idle_tracker;
mod image_build;
mod lifecycle_runner;
mod registry_auth;
mod session_container;
mod session_settings;
mod settings_resolution;
mod trust;
mod workspace_record;
mod workspaces;

pub use session_settings::SessionSettings;
pub use trust::Trust;
pub use workspace_record::{load as load_record, remove as remove_record, WorkspaceRecord};
pub use workspaces::{
    CreateWorkspace, WorkspaceEnvironment, WorkspaceInfo, Workspaces, WorkspacesOptions,
};
