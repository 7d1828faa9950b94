//! Session workspaces (docs/contract.md §6): clone + container + devcontainer.json under the
//! host's trust, the settings fixed at creation and stored.

mod clone_owner;
mod feature_fetch;
mod feature_image;
mod feature_set;
mod feature_source;
mod host_paths;
mod idle_tracker;
mod image_build;
mod image_prune;
mod image_supply;
mod lifecycle_runner;
mod metadata_merge;
mod plain_folder;
mod pool_claim;
mod pool_members;
mod remote_env;
mod session_behaviour;
mod session_changes;
mod session_container;
mod session_egress;
mod session_export;
mod session_lifecycle;
mod session_push;
mod session_resources;
mod session_settings;
mod session_source;
mod session_volume;
mod settings_resolution;
mod trust;
mod uid_image;
mod user_env_probe;
mod volume_readback;
mod workspace_creation;
mod workspace_record;
mod workspace_storage;
mod workspaces;

pub use image_prune::{PruneReport, PruneRequest};
pub use plain_folder::PlainFolder;
pub use session_export::ExportRequest;
pub use session_push::PushRequest;
pub use session_settings::SessionSettings;
pub use trust::{Grant, Refusal, Trust};
pub use workspace_record::{
    load as load_record, remove as remove_record, session_ids, WorkspaceRecord,
};
pub use workspace_storage::{Storage, StorageChoice};
pub use workspaces::{
    CreateWorkspace, WorkspaceEnvironment, WorkspaceInfo, Workspaces, WorkspacesOptions,
};
