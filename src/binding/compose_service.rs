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
    /// Build arguments, names without a value filled from the compose environment.
    pub args: HashMap<String, String>,
    /// The stage to build.
    pub target: Option<String>,
}

/// A service's `healthcheck`, durations in milliseconds.
#[napi(object, object_from_js = false)]
pub struct ComposeHealthcheck {
    /// As the engine takes it: `['CMD', …]`, `['CMD-SHELL', cmd]`, or `['NONE']` (disabled).
    pub test: Vec<String>,
    /// `interval`.
    pub interval_ms: Option<f64>,
    /// `timeout`.
    pub timeout_ms: Option<f64>,
    /// `retries`.
    pub retries: Option<f64>,
    /// `start_period`.
    pub start_period_ms: Option<f64>,
    /// `start_interval`.
    pub start_interval_ms: Option<f64>,
}

/// A mount of a service.
#[napi(object, object_from_js = false)]
pub struct ComposeMount {
    /// What is mounted.
    #[napi(js_name = "type", ts_type = "'bind' | 'volume' | 'tmpfs'")]
    pub kind: String,
    /// A bind's absolute host path (inside the project: the project's), a volume's key
    /// (empty: anonymous), empty for tmpfs.
    pub source: String,
    /// The container path.
    pub target: String,
    /// Whether the mount is read-only.
    pub readonly: bool,
    /// A bind source inside the project: its path from the project's root (a session
    /// mounts its clone's).
    pub in_project: Option<String>,
}

/// A port a service listens on; the host side is only a request.
#[napi(object, object_from_js = false)]
pub struct ComposePort {
    /// The port the service listens on in the session's shared namespace.
    pub container_port: u32,
    /// `tcp` unless the file says otherwise.
    pub protocol: String,
    /// The host port `ports` asks for (a request; `forwardPort` decides).
    pub host_port: Option<u32>,
    /// The host address `ports` asks for (a request).
    pub host_ip: Option<String>,
    /// Where the port is named.
    #[napi(ts_type = "'ports' | 'expose'")]
    pub field: String,
}

/// One `depends_on` entry.
#[napi(object, object_from_js = false)]
pub struct ComposeDependency {
    /// The service depended on.
    pub service: String,
    /// What is waited for: started, healthy, or exited 0.
    #[napi(ts_type = "'service_started' | 'service_healthy' | 'service_completed_successfully'")]
    pub condition: String,
    /// False: the dependency may be absent.
    pub required: bool,
    /// Whether compose restarts the dependent when this one is restarted.
    pub restart: bool,
}

/// What the service asks of the host that the trust granted.
#[napi(object, object_from_js = false)]
pub struct ComposePrivileges {
    /// `privileged`.
    pub privileged: bool,
    /// `cap_add`.
    pub cap_add: Vec<String>,
    /// `cap_drop`.
    pub cap_drop: Vec<String>,
    /// `security_opt`.
    pub security_opt: Vec<String>,
    /// `devices`, as `HOST[:CONTAINER[:PERMISSIONS]]`.
    pub devices: Vec<String>,
    /// `pid`, `ipc`, `uts`, `userns`, `cgroupns` → mode.
    pub namespaces: HashMap<String, String>,
}

/// A service that would be started.
#[napi(object, object_from_js = false)]
pub struct ComposeService {
    /// The service's name.
    pub name: String,
    /// `image`.
    pub image: Option<String>,
    /// `build`, its paths checked to be in the project (or trusted).
    pub build: Option<ComposeBuild>,
    /// `env_file` then `environment`, interpolated.
    pub environment: HashMap<String, String>,
    /// `command` as argv (a string is split as compose splits it).
    pub command: Option<Vec<String>>,
    /// `entrypoint` as argv.
    pub entrypoint: Option<Vec<String>>,
    /// `user`.
    pub user: Option<String>,
    /// `working_dir`.
    pub working_dir: Option<String>,
    /// `healthcheck`; absent: the image's.
    pub healthcheck: Option<ComposeHealthcheck>,
    /// `volumes`: named and anonymous volumes, binds, tmpfs.
    pub mounts: Vec<ComposeMount>,
    /// `tmpfs` paths.
    pub tmpfs: Vec<String>,
    /// `ports` and `expose`, ranges expanded.
    pub ports: Vec<ComposePort>,
    /// `labels`.
    pub labels: HashMap<String, String>,
    /// `depends_on` (short form: `service_started`, required).
    pub depends_on: Vec<ComposeDependency>,
    /// `init`, when the file says.
    pub init: Option<bool>,
    /// `read_only`.
    pub read_only: bool,
    /// `platform`.
    pub platform: Option<String>,
    /// What it asks of the host that the trust granted.
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
                        MountSource::Project(relative) => {
                            let source = match relative.as_os_str().is_empty() {
                                true => project.to_path_buf(),
                                false => project.join(&relative),
                            };
                            ("bind", path(&source), Some(path(&relative)))
                        }
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
