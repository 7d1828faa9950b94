//! Creating and running containers as docs/contract.md §2 describes: Lace's
//! `ContainerRuntime` as a trait, the `ContainerConfig` a caller creates from, and
//! `DockerRuntime` over the Engine API, which puts the session agent into each container,
//! routes its network through the egress relay and streams exec through the agent. It
//! stands on `runtime` (exec, labels, mounts) and on `agent`, `egress` and `fileio`.

mod adoption;
mod agent_delivery;
mod container_body;
mod container_config;
mod container_create;
mod create_checks;
mod docker_runtime;
pub mod exec_stream;
pub mod healthcheck;
mod image_create;
mod new_container_labels;
mod pool_member_calls;
mod relayed_network;
mod runtime_exec_target;
mod runtime_trait;

pub use agent_delivery::AgentDelivery;
pub use container_config::{ContainerConfig, RestartPolicy, SetMembership};
pub use docker_runtime::{DockerRuntime, RuntimeOptions};
pub use healthcheck::Healthcheck;
pub use new_container_labels::labels_for_new_container;
pub use runtime_exec_target::RuntimeContainer;
pub use runtime_trait::ContainerRuntime;
