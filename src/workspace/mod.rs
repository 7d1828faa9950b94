//! Session workspaces (docs/contract.md §6): clone + container + devcontainer.json under the
//! host's trust, the settings fixed at creation and stored.

mod clone_owner;
mod feature_fetch;
mod feature_image;
mod feature_set;
mod feature_source;
mod idle_tracker;
mod image_build;
mod image_prune;
mod image_supply;
mod lifecycle_runner;
mod plain_folder;
mod pool_claim;
mod pool_members;
mod session_changes;
mod session_container;
mod session_egress;
mod session_export;
mod session_lifecycle;
mod session_push;
mod session_source;
mod session_volume;
mod uid_image_build;
mod volume_readback;
mod workspace_creation;
mod workspace_record;
mod workspace_storage;
mod workspaces;

pub use image_prune::{PruneReport, PruneRequest};
pub use plain_folder::PlainFolder;
pub use session_export::ExportRequest;
pub use session_push::PushRequest;
pub use workspace_record::{
    load as load_record, remove as remove_record, session_ids, WorkspaceRecord,
};
pub use workspace_storage::{Storage, StorageChoice};
pub use workspaces::{
    CreateWorkspace, WorkspaceEnvironment, WorkspaceInfo, Workspaces, WorkspacesOptions,
};
