//! Containers through the Engine API, below any one runtime: exec (buffered, and killing
//! its process tree), logs, labels and owners, mounts and path translation, names, limits
//! and the answers an engine gives about a container. The agent, file I/O, egress, shell
//! and git stand on this room; `container_runtime` (creating and running containers as
//! docs/contract.md §2 describes) stands above them.

mod container_info;
mod container_mount;
mod container_privileges;
mod container_use;
mod engine_answers;
mod environment_vars;
pub mod exec;
mod exec_buffered;
mod exec_target;
pub mod exec_token;
mod keepalive;
mod known_mounts;
pub mod labels;
mod lifetime;
mod line_folder;
mod logs;
mod managed_containers;
mod mount_source;
mod naming;
mod owner;
mod owner_status;
mod path_exists;
mod path_translation;
pub mod pool_member;
mod port_mapping;
mod process_engines;
pub mod process_kill;
pub mod resource_limits;
mod swappable_mount;

pub use container_info::{parse_engine_time, ContainerInfo, ContainerState};
pub use container_mount::{ContainerMount, MountKind};
pub use container_privileges::ContainerPrivileges;
pub use container_use::{begin_use, ContainerUse, UseFuture, UseGuard};
pub use engine_answers::{
    bind_mounts, bind_mounts_with_agent, info_from_inspect, info_from_summary, line_mount,
    AGENT_MOUNT, LINE_MOUNT,
};
pub use environment_vars::check_environment;
pub use exec::{ExecOutcome, ExecRequest};
pub use exec_buffered::run_buffered;
pub use exec_target::{EngineContainer, ExecTarget};
pub use keepalive::{sandbox_command, sandbox_command_after, SHELL};
pub use known_mounts::KnownMounts;
pub use lifetime::Lifetime;
pub use line_folder::LineFolder;
pub use logs::{stream_logs, LogsRequest};
pub use managed_containers::{managed_containers, remove_quietly, ManagedContainer};
pub use mount_source::ensure_mount_source;
pub use naming::{compute_container_name, container_name, validate_name};
pub use owner::{process_start, OwnerIdentity};
pub use owner_status::{owner_status, OwnerStatus};
pub use path_exists::path_exists;
pub use path_translation::{translate, Direction};
pub use port_mapping::{check_ports, engine_ports, PortMapping, DEFAULT_HOST_IP};
pub use process_engines::{has_process_containers, note_process_container, process_engines};
pub use resource_limits::{ResourceLimits, ResourceNumbers};
pub use swappable_mount::swappable_mount;
