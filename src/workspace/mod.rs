//! Session workspaces (docs/contract.md §6), the session's own lifecycle: made (its clone,
//! its settings from `session_settings`, its image from `session_images`, its record, its
//! container, volume and egress), used, stopped when idle, and destroyed; its work read back,
//! exported and pushed; its container claimed from the warm pool.

mod clone_owner;
mod compose_config;
mod idle_tracker;
mod lifecycle_runner;
mod plain_folder;
mod pool_claim;
mod pool_members;
mod service_teardown;
mod session_changes;
mod session_checkpoints;
mod session_container;
mod session_egress;
mod session_export;
mod session_lifecycle;
mod session_push;
mod session_services;
mod session_source;
mod session_volume;
mod volume_readback;
mod workspace_creation;
mod workspace_record;
mod workspace_storage;
mod workspaces;

pub use compose_config::{read_compose_session, ComposeSession};
pub use idle_tracker::{IdleOwner, IdleTracker, SessionCall, SessionUseHook};
pub use lifecycle_runner::{run_on_host, InContainer, CREATE_STEPS};
pub use plain_folder::PlainFolder;
pub use session_changes::base_of;
pub use session_checkpoints::{ForkWorkspace, KEEP_CHECKPOINTS};
pub use session_export::{author_for, default_branch, default_message, ExportRequest};
pub use session_push::PushRequest;
pub(crate) use volume_readback::{fresh_beside, replace_clone};
pub use workspace_record::{
    load as load_record, owner_for, remove as remove_record, save as save_record, session_ids,
    WorkspaceRecord,
};
pub use workspace_storage::{Storage, StorageChoice};
pub use workspaces::{
    CreateWorkspace, WorkspaceEnvironment, WorkspaceInfo, Workspaces, WorkspacesOptions,
};
