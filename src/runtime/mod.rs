//! Containers through the Engine API: create/start/stop/remove, exec, logs, inspect, list,
//! and path translation (docs/contract.md §2).

mod adoption;
mod agent_delivery;
mod container_body;
mod container_config;
mod container_create;
mod container_info;
mod container_privileges;
mod container_runtime;
mod container_use;
mod create_checks;
mod docker_runtime;
mod engine_answers;
mod environment_vars;
pub mod exec;
mod exec_buffered;
pub mod exec_stream;
pub mod exec_token;
mod image_create;
mod keepalive;
mod known_mounts;
pub mod labels;
mod line_folder;
mod logs;
mod mount_source;
mod naming;
mod owner;
mod owner_status;
mod path_exists;
mod path_translation;
pub mod pool_member;
mod pool_member_calls;
mod port_mapping;
mod process_engines;
pub mod process_kill;
mod relayed_network;
pub mod resource_limits;

pub use agent_delivery::AgentDelivery;
pub use container_config::{ContainerConfig, ContainerMount, Lifetime, MountKind, RestartPolicy};
pub use container_info::{parse_engine_time, ContainerInfo, ContainerState};
pub use container_privileges::ContainerPrivileges;
pub use container_runtime::ContainerRuntime;
pub use container_use::{begin_use, ContainerUse, UseFuture, UseGuard};
pub use docker_runtime::{DockerRuntime, RuntimeOptions};
pub use engine_answers::{
    bind_mounts, bind_mounts_with_agent, line_mount, AGENT_MOUNT, LINE_MOUNT,
};
pub use environment_vars::check_environment;
pub use exec::{ExecOutcome, ExecRequest};
pub use exec_buffered::run_buffered;
pub use keepalive::sandbox_command;
pub use known_mounts::KnownMounts;
pub use line_folder::LineFolder;
pub use logs::LogsRequest;
pub use mount_source::ensure_mount_source;
pub use naming::{compute_container_name, container_name, validate_name};
pub use owner::{process_start, OwnerIdentity};
pub use owner_status::{owner_status, OwnerStatus};
pub use path_exists::path_exists;
pub use path_translation::{translate, Direction};
pub use port_mapping::{PortMapping, DEFAULT_HOST_IP};
pub use process_engines::{has_process_containers, note_process_container, process_engines};
pub use resource_limits::{ResourceLimits, ResourceNumbers};
