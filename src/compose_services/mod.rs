//! A compose devcontainer's services sealed in one network namespace (issue 37): a holder
//! container with network `none` whose namespace every service (and the session container)
//! joins, so each service reaches the others on loopback by name and nothing else; the
//! services made from a plain description in dependency order, each started once what it
//! depends on is ready, labelled as the session's so that stop, destroy, exit hooks, the
//! watchdog and `reapOrphans` treat the set as the session; the session's pids budget
//! shared among them.

mod health_probe;
mod holder;
mod pids_budget;
mod readiness;
mod service_binds;
mod service_config;
mod service_spec;
mod set_names;
mod set_start;
mod set_teardown;
mod set_volumes;
mod spec_checks;

pub use holder::Joining;
pub use pids_budget::{share_pids, PidsShares, SERVICE_PIDS_CAP};
pub use service_spec::{
    BindMount, BindSource, Condition, Dependency, ServiceSetSpec, ServiceSpec, StoredServices,
    VolumeMount, DEFAULT_READY_TIMEOUT,
};
pub use set_names::{holder_name, service_container_name, volume_name};
pub use set_start::{start_service_set, ServiceSet};
pub use set_teardown::{remove_service_set, stop_service_set};
