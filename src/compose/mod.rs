//! Docker Compose devcontainers read as the compose specification says (docs/api.md,
//! "Compose devcontainers"): devcontainer.json's `dockerComposeFile`, `service` and
//! `runServices` turned into a plan of what a session would run, its services in dependency
//! order, everything that reaches beyond the session checked against the host's trust.
//! Reading only: nothing here starts a container.

mod compose_document;
mod compose_env;
mod compose_plan;
mod compose_reading;
mod dotenv;
mod extends;
mod file_merge;
mod interpolation;
mod port_clashes;
mod project_compose;
mod project_files;
mod service_checks;
mod service_keys;
mod service_paths;
mod service_reading;
mod service_selection;
mod spec_values;

pub use compose_plan::{
    ComposePlan, Condition, Dependency, Healthcheck, MountSource, PlannedService, PlannedVolume,
    ServiceBuild, ServiceMount, ServicePort,
};
pub use compose_reading::{read_compose_project, ComposeRequest};
pub use project_compose::read_project_compose;
