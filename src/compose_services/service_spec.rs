//! What the set is made from: a plain description of each compose service (already read,
//! merged, interpolated and checked against the session's trust by the compose reader),
//! given in dependency order, and of the session the set belongs to.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use crate::compose::Condition;
use crate::container_runtime::{ContainerConfig, Healthcheck};
use crate::progress::Progress;
use crate::runtime::{ContainerPrivileges, Lifetime, ResourceLimits};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Dependency {
    pub service: String,
    pub condition: Condition,
}

/// A named volume of the compose file mounted into a service; made as the session's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VolumeMount {
    /// The compose file's volume name (the engine's volume is named after the set).
    pub volume: String,
    pub target: String,
    pub read_only: bool,
}

/// Where a service's bind mount comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BindSource {
    /// A path in the session clone, from its root: walked without following a symlink
    /// before every start of the service, as the session container's clone mounts are.
    Clone(PathBuf),
    /// A host path the session's trust allowed (canonical): it must still resolve to itself.
    Host(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BindMount {
    pub source: BindSource,
    pub target: String,
    pub read_only: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// The compose service name: its host name inside the set, and part of its container's.
    pub name: String,
    pub image: String,
    pub environment: BTreeMap<String, String>,
    /// Replaces the image's CMD (compose `command`).
    pub command: Option<Vec<String>>,
    /// Replaces the image's ENTRYPOINT, and its CMD unless `command` is given.
    pub entrypoint: Option<Vec<String>>,
    pub user: Option<String>,
    /// The image's working directory when `None`.
    pub working_dir: Option<String>,
    /// The image's own healthcheck applies when `None`; `["NONE"]` turns it off.
    pub healthcheck: Option<Healthcheck>,
    pub volumes: Vec<VolumeMount>,
    #[serde(default)]
    pub binds: Vec<BindMount>,
    /// What the session's trust granted it; a namespace mode `service:<name>` joins that
    /// earlier service's container.
    #[serde(default)]
    pub privileges: ContainerPrivileges,
    /// Targets of tmpfs mounts.
    pub tmpfs: Vec<String>,
    /// The compose file's labels (ours are added, and cannot be overridden).
    pub labels: BTreeMap<String, String>,
    pub depends_on: Vec<Dependency>,
}

#[derive(Debug, Clone)]
pub struct ServiceSetSpec {
    pub session_id: String,
    /// The session container's name: the set's containers and volumes are named after it.
    pub container: String,
    /// The compose service the session container runs: mapped to loopback like the others.
    pub app_service: String,
    /// What the session container waits for before the set counts as ready.
    pub app_depends_on: Vec<Dependency>,
    /// The holder's image: the session's own, which the engine has whenever the session
    /// can be made (kept alive as a session container is).
    pub holder_image: String,
    /// In dependency order: each service's dependencies come before it.
    pub services: Vec<ServiceSpec>,
    pub lifetime: Lifetime,
    /// The session's limits: each service gets them, except pids, which the set shares.
    pub limits: ResourceLimits,
    pub clone_path: Option<String>,
    pub project_dir: Option<String>,
    /// How long the whole set may take to become ready (healthchecks, completions).
    pub ready_timeout: Duration,
    pub progress: Progress,
}

impl ServiceSetSpec {
    /// What every container of the set takes from the session: its lifetime, owner labels,
    /// limits (with `pids`, the container's share) and progress.
    pub fn member_config(&self, pids: Option<i64>) -> ContainerConfig {
        ContainerConfig {
            resources: ResourceLimits {
                pids,
                ..self.limits
            },
            lifetime: self.lifetime,
            session_id: Some(self.session_id.clone()),
            clone_path: self.clone_path.clone(),
            project_dir: self.project_dir.clone(),
            progress: self.progress.clone(),
            ..Default::default()
        }
    }
}

impl Default for ServiceSetSpec {
    fn default() -> Self {
        ServiceSetSpec {
            session_id: String::new(),
            container: String::new(),
            app_service: String::new(),
            app_depends_on: Vec::new(),
            holder_image: String::new(),
            services: Vec::new(),
            lifetime: Lifetime::Session,
            limits: ResourceLimits::default(),
            clone_path: None,
            project_dir: None,
            ready_timeout: DEFAULT_READY_TIMEOUT,
            progress: Progress::none(),
        }
    }
}

/// How long a set may take to become ready unless the caller says.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(120);

/// What a session keeps of its set in its record, to make the set again (a restart, a
/// removed container made again): everything but what the session itself gives.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredServices {
    pub app_service: String,
    pub app_depends_on: Vec<Dependency>,
    pub services: Vec<ServiceSpec>,
}
