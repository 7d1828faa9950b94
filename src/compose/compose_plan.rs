//! What a compose devcontainer would run: its services in dependency order, each with what a
//! session makes its container from, and what the reading did not act on. Plain data: nothing
//! here starts, pulls or builds.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::runtime::ContainerPrivileges;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComposePlan {
    /// Compose's project name, normalised (a session puts its own id before it).
    pub name: String,
    /// The project's root (canonical): `MountSource::Project` paths start there.
    pub project: PathBuf,
    /// The compose files read, in merge order (absolute).
    pub files: Vec<PathBuf>,
    /// devcontainer.json's `service`: the container the session's tools run in.
    pub service: String,
    /// What would be started, each after what it depends on.
    pub services: Vec<PlannedService>,
    /// The named volumes the planned services mount.
    pub volumes: Vec<PlannedVolume>,
    /// What the files ask for that is not acted on, one sentence each.
    pub warnings: Vec<String>,
    /// Variables the files read that the host's environment was not asked for (not granted
    /// by `trust.localEnv`), sorted.
    pub host_env_not_read: Vec<String>,
}

impl ComposePlan {
    pub fn service(&self, name: &str) -> Option<&PlannedService> {
        self.services.iter().find(|s| s.name == name)
    }
}

/// A named volume: its key in the files, and the name `name:` gives it, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedVolume {
    pub key: String,
    pub name: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlannedService {
    pub name: String,
    pub image: Option<String>,
    pub build: Option<ServiceBuild>,
    pub environment: BTreeMap<String, String>,
    pub command: Option<Vec<String>>,
    pub entrypoint: Option<Vec<String>>,
    pub user: Option<String>,
    pub working_dir: Option<String>,
    pub healthcheck: Option<Healthcheck>,
    pub mounts: Vec<ServiceMount>,
    pub tmpfs: Vec<String>,
    pub ports: Vec<ServicePort>,
    pub labels: BTreeMap<String, String>,
    pub depends_on: Vec<Dependency>,
    pub init: Option<bool>,
    pub read_only: bool,
    pub platform: Option<String>,
    /// Only what the host's trust granted.
    pub privileges: ContainerPrivileges,
}

/// A service's `build`: context and Dockerfile checked to be in the project (or trusted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceBuild {
    /// Canonical.
    pub context: PathBuf,
    /// Absolute (canonical when it exists).
    pub dockerfile: PathBuf,
    pub args: BTreeMap<String, String>,
    pub target: Option<String>,
}

/// `healthcheck`, durations in milliseconds; `test` as the engine takes it (`CMD …`,
/// `CMD-SHELL …`, or `NONE` when disabled).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Healthcheck {
    pub test: Vec<String>,
    pub interval_ms: Option<u64>,
    pub timeout_ms: Option<u64>,
    pub retries: Option<u64>,
    pub start_period_ms: Option<u64>,
    pub start_interval_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountSource {
    /// A path inside the project, from its root (a session mounts its clone's).
    Project(PathBuf),
    /// A host path outside the project the host's trust allows (canonical).
    Host(PathBuf),
    /// A named volume (its key in the files), or an anonymous one.
    Volume(Option<String>),
    Tmpfs,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceMount {
    pub source: MountSource,
    pub target: String,
    pub read_only: bool,
}

/// A port a service listens on. The host side of `ports` is only a request: a session serves
/// a port on the host through `forwardPort`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServicePort {
    pub container_port: u16,
    pub protocol: String,
    pub host_port: Option<u16>,
    pub host_ip: Option<String>,
    /// `ports` or `expose`.
    pub field: &'static str,
}

/// What a service waits for in a dependency before it starts (compose `depends_on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// `service_started`: the dependency was started.
    Started,
    /// `service_healthy`: its healthcheck passed.
    Healthy,
    /// `service_completed_successfully`: it ran to exit code 0.
    CompletedSuccessfully,
}

impl Condition {
    pub fn as_str(self) -> &'static str {
        match self {
            Condition::Started => "service_started",
            Condition::Healthy => "service_healthy",
            Condition::CompletedSuccessfully => "service_completed_successfully",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependency {
    pub service: String,
    pub condition: Condition,
    pub required: bool,
    pub restart: bool,
}
