//! One service of a `ComposeProject`, as plain objects.

use std::collections::HashMap;

use napi_derive::napi;

use crate::compose::{MountSource, PlannedService};

/// A service's `build`.
#[napi(object, object_from_js = false)]
pub struct ComposeBuild {
    /// Absolute (symlinks resolved).
    pub context: String,
    /// Absolute.
    pub dockerfile: String,
    pub args: HashMap<String, String>,
    pub target: Option<String>,
}

/// A service's `healthcheck`, durations in milliseconds.
#[napi(object, object_from_js = false)]
pub struct ComposeHealthcheck {
    /// As the engine takes it: `['CMD', …]`, `['CMD-SHELL', cmd]`, or `['NONE']` (disabled).
    pub test: Vec<String>,
    pub interval_ms: Option<f64>,
    pub timeout_ms: Option<f64>,
    pub retries: Option<f64>,
    pub start_period_ms: Option<f64>,
    pub start_interval_ms: Option<f64>,
}

/// A mount of a service.
#[napi(object, object_from_js = false)]
pub struct ComposeMount {
    #[napi(js_name = "type", ts_type = "'bind' | 'volume' | 'tmpfs'")]
    pub kind: String,
    /// A bind's absolute host path (inside the project: the project's), a volume's key
    /// (empty: anonymous), empty for tmpfs.
    pub source: String,
    pub target: String,
    pub readonly: bool,
    /// A bind source inside the project: its path from the project's root (a session
    /// mounts its clone's).
    pub in_project: Option<String>,
}

/// A port a service listens on; the host side is only a request.
#[napi(object, object_from_js = false)]
pub struct ComposePort {
    pub container_port: u32,
    pub protocol: String,
    pub host_port: Option<u32>,
    pub host_ip: Option<String>,
    #[napi(ts_type = "'ports' | 'expose'")]
    pub field: String,
}

/// One `depends_on` entry.
#[napi(object, object_from_js = false)]
pub struct ComposeDependency {
    pub service: String,
    #[napi(ts_type = "'service_started' | 'service_healthy' | 'service_completed_successfully'")]
    pub condition: String,
    pub required: bool,
    pub restart: bool,
}

/// What the service asks of the host that the trust granted.
#[napi(object, object_from_js = false)]
pub struct ComposePrivileges {
    pub privileged: bool,
    pub cap_add: Vec<String>,
    pub cap_drop: Vec<String>,
    pub security_opt: Vec<String>,
    pub devices: Vec<String>,
    /// `pid`, `ipc`, `uts`, `userns`, `cgroupns` → mode.
    pub namespaces: HashMap<String, String>,
}

/// A service that would be started.
#[napi(object, object_from_js = false)]
pub struct ComposeService {
    pub name: String,
    pub image: Option<String>,
    pub build: Option<ComposeBuild>,
    pub environment: HashMap<String, String>,
    pub command: Option<Vec<String>>,
    pub entrypoint: Option<Vec<String>>,
    pub user: Option<String>,
    pub working_dir: Option<String>,
    pub healthcheck: Option<ComposeHealthcheck>,
    pub mounts: Vec<ComposeMount>,
    pub tmpfs: Vec<String>,
    pub ports: Vec<ComposePort>,
    pub labels: HashMap<String, String>,
    pub depends_on: Vec<ComposeDependency>,
    pub init: Option<bool>,
    pub read_only: bool,
    pub platform: Option<String>,
    pub privileges: ComposePrivileges,
}

fn ms(value: Option<u64>) -> Option<f64> {
    value.map(|v| v as f64)
}

impl ComposeService {
    /// `s`, its bind sources inside the project shown under `project`.
    pub fn of(s: PlannedService, project: &std::path::Path) -> Self {
        let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
        ComposeService {
            name: s.name,
            image: s.image,
            build: s.build.map(|b| ComposeBuild {
                context: path(&b.context),
                dockerfile: path(&b.dockerfile),
                args: b.args.into_iter().collect(),
                target: b.target,
            }),
            environment: s.environment.into_iter().collect(),
            command: s.command,
            entrypoint: s.entrypoint,
            user: s.user,
            working_dir: s.working_dir,
            healthcheck: s.healthcheck.map(|h| ComposeHealthcheck {
                test: h.test,
                interval_ms: ms(h.interval_ms),
                timeout_ms: ms(h.timeout_ms),
                retries: ms(h.retries),
                start_period_ms: ms(h.start_period_ms),
                start_interval_ms: ms(h.start_interval_ms),
            }),
            mounts: s
                .mounts
                .into_iter()
                .map(|m| {
                    let (kind, source, in_project) = match m.source {
                        MountSource::Project(relative) => (
                            "bind",
                            path(&project.join(&relative)),
                            Some(path(&relative)),
                        ),
                        MountSource::Host(host) => ("bind", path(&host), None),
                        MountSource::Volume(name) => ("volume", name.unwrap_or_default(), None),
                        MountSource::Tmpfs => ("tmpfs", String::new(), None),
                    };
                    ComposeMount {
                        kind: kind.to_string(),
                        source,
                        target: m.target,
                        readonly: m.read_only,
                        in_project,
                    }
                })
                .collect(),
            tmpfs: s.tmpfs,
            ports: s
                .ports
                .into_iter()
                .map(|p| ComposePort {
                    container_port: u32::from(p.container_port),
                    protocol: p.protocol,
                    host_port: p.host_port.map(u32::from),
                    host_ip: p.host_ip,
                    field: p.field.to_string(),
                })
                .collect(),
            labels: s.labels.into_iter().collect(),
            depends_on: s
                .depends_on
                .into_iter()
                .map(|d| ComposeDependency {
                    service: d.service,
                    condition: d.condition.as_str().to_string(),
                    required: d.required,
                    restart: d.restart,
                })
                .collect(),
            init: s.init,
            read_only: s.read_only,
            platform: s.platform,
            privileges: ComposePrivileges {
                privileged: s.privileges.privileged,
                cap_add: s.privileges.cap_add,
                cap_drop: s.privileges.cap_drop,
                security_opt: s.privileges.security_opt,
                devices: s.privileges.devices,
                namespaces: s.privileges.namespaces.into_iter().collect(),
            },
        }
    }
}
