//! The plain objects of docs/contract.md §2 as JavaScript sees them, and their conversions.

use super::durations::duration_ms;
use super::egress::{egress_from_js, EgressOption};
use super::progress::pull_policy;
use super::resources::{resources_from_js, Resources};
use std::collections::HashMap;

use chrono::{DateTime, Utc};
use napi_derive::napi;

use crate::container_runtime::{self, RestartPolicy};
use crate::error::{Error, Result};
use crate::output;
use crate::runtime::{self, ContainerPrivileges, ExecOutcome, ExecRequest, Lifetime};

/// A bind mount: a host directory or file seen at a container path.
#[napi(object)]
pub struct ContainerMount {
    /// Absolute host path; created as a directory by `create` when missing.
    pub source: String,
    /// Absolute container path.
    pub target: String,
    /// Default false.
    #[napi(ts_type = "boolean | undefined")]
    pub readonly: Option<bool>,
}

/// A container port published on the host.
#[napi(object)]
pub struct PortMapping {
    /// 0: the engine picks a free port.
    pub host: u32,
    /// The container's port.
    pub container: u32,
    /// Default '127.0.0.1' (this machine only); '0.0.0.0' publishes on every interface.
    #[napi(ts_type = "string | undefined")]
    pub host_ip: Option<String>,
    /// Default 'tcp'.
    #[napi(ts_type = "'tcp' | 'udp' | 'sctp' | undefined")]
    pub protocol: Option<String>,
}

/// What `DockerRuntime.create` makes: Lace's `ContainerConfig`. Environment names that are
/// empty or hold `=` or NUL reject `INVALID_ARGUMENT`.
#[napi(object, object_to_js = false)]
pub struct ContainerConfig {
    /// Prefix of the generated name (`<id>-<8 hex>`) when `name` is absent; empty counts as
    /// absent.
    #[napi(ts_type = "string | undefined")]
    pub id: Option<String>,
    /// The container's name, used as is; empty counts as absent.
    #[napi(ts_type = "string | undefined")]
    pub name: Option<String>,
    /// Default: the runtime's `image`. Pulled from its registry when the engine lacks it,
    /// unless `pull` (or the runtime's) is `'never'`: then `IMAGE_NOT_FOUND`.
    #[napi(ts_type = "string | undefined")]
    pub image: Option<String>,
    /// Absolute container path commands run in by default.
    pub working_directory: String,
    /// Bind mounts; `translateToContainer`/`translateToHost` map paths through them.
    pub mounts: Vec<ContainerMount>,
    /// Given: a job whose main process is this command. Absent: a sandbox kept alive.
    #[napi(ts_type = "Array<string> | undefined")]
    pub command: Option<Vec<String>>,
    /// Variables of the container's processes.
    #[napi(ts_type = "Record<string, string> | undefined")]
    pub environment: Option<HashMap<String, String>>,
    /// Bytes; swap as the engine defaults it. `resources.memory` is the limit without swap;
    /// given both, they must be equal (else `INVALID_ARGUMENT`).
    #[napi(ts_type = "number | undefined")]
    pub memory: Option<i64>,
    /// Relative CPU weight.
    #[napi(ts_type = "number | undefined")]
    pub cpu_shares: Option<i64>,
    /// Limits on pids, memory (no swap), CPUs and open files; none by default (the host
    /// decides). An invalid value rejects `INVALID_ARGUMENT` and creates nothing.
    #[napi(ts_type = "Resources | undefined")]
    pub resources: Option<Resources>,
    /// Added to the labels this library sets (docs/contract.md §6).
    #[napi(ts_type = "Record<string, string> | undefined")]
    pub labels: Option<HashMap<String, String>>,
    /// The user processes run as (a name, `uid` or `uid:gid`); a name the image lacks
    /// rejects `INVALID_ARGUMENT`.
    #[napi(ts_type = "string | undefined")]
    pub user: Option<String>,
    /// 'none' | 'bridge' | a network name.
    #[napi(ts_type = "string | undefined")]
    pub network: Option<String>,
    /// Default 'session': kept until removed. 'process': reaped once this process is gone.
    #[napi(ts_type = "'process' | 'session' | undefined")]
    pub lifetime: Option<String>,
    /// Ports published on the host (on 127.0.0.1 unless `hostIp` says otherwise).
    #[napi(ts_type = "Array<PortMapping> | undefined")]
    pub ports: Option<Vec<PortMapping>>,
    /// Needs lifetime 'session' unless 'no'.
    #[napi(ts_type = "'no' | 'unless-stopped' | 'always' | 'on-failure' | undefined")]
    pub restart_policy: Option<String>,
    /// Namespaced kernel parameters, e.g. `{ 'net.ipv4.ip_forward': '1' }`.
    #[napi(ts_type = "Record<string, string> | undefined")]
    pub sysctls: Option<HashMap<String, String>>,
    /// Linux capabilities added to the engine's default set, e.g. `['NET_ADMIN']`.
    #[napi(ts_type = "Array<string> | undefined")]
    pub cap_add: Option<Vec<String>>,
    /// Where the container may connect. Absent: the engine's network (`network`), as the
    /// host chose it. `'none'`, `'public'` or a policy: no network, only the session relay
    /// (its HTTP proxy on 127.0.0.1:3128 and SOCKS5 on 127.0.0.1:1080, in the proxy
    /// variables), started at each `start` in this process.
    #[napi(ts_type = "'none' | 'public' | 'bridge' | EgressPolicy | undefined")]
    pub egress: Option<EgressOption>,
    /// Over the runtime's `pull`: `'missing'` pulls the image when the engine has none
    /// for the name (and platform), `'always'` pulls it first, `'never'` rejects
    /// `IMAGE_NOT_FOUND`.
    #[napi(ts_type = "'missing' | 'always' | 'never' | undefined")]
    pub pull: Option<String>,
}

/// A container as `inspect`, `daemonInspect` and `list` report it: Lace's `ContainerInfo`.
#[napi(object)]
pub struct ContainerInfo {
    /// The container's name (every method accepts it as its id).
    pub id: String,
    /// The engine's name for it.
    pub name: Option<String>,
    /// `stopped`: exited 0, or 143/137 after a stop; `failed`: exited with another code, or
    /// dead.
    #[napi(ts_type = "'created' | 'running' | 'stopped' | 'failed'")]
    pub state: String,
    /// The main process's pid on the host, while running.
    pub pid: Option<u32>,
    /// When the container last started.
    pub started_at: Option<DateTime<Utc>>,
    /// When the container last stopped.
    pub stopped_at: Option<DateTime<Utc>>,
    /// The main process's exit code, once it has exited.
    pub exit_code: Option<i64>,
    /// The image it was created from.
    pub image: Option<String>,
    /// Every label, ours (docs/contract.md §6) included.
    pub labels: Option<HashMap<String, String>>,
    /// Bind mounts (host path → container path).
    pub mounts: Option<Vec<ContainerMount>>,
}

/// A command for `DockerRuntime.exec`.
#[napi(object)]
pub struct ExecOptions {
    /// Argv, run without a shell in between.
    pub command: Vec<String>,
    /// Default: the container's working directory.
    #[napi(ts_type = "string | undefined")]
    pub working_directory: Option<String>,
    /// Added to the container's environment, or all of it with `environmentMode:
    /// 'replace'`.
    #[napi(ts_type = "Record<string, string> | undefined")]
    pub environment: Option<HashMap<String, String>>,
    /// Written to the command's stdin, which is then closed.
    #[napi(ts_type = "string | undefined")]
    pub stdin: Option<String>,
    /// Milliseconds; on expiry the command's processes are killed and the call rejects
    /// with TIMEOUT.
    #[napi(ts_type = "number | undefined")]
    pub timeout: Option<f64>,
    /// Default: the container's user.
    #[napi(ts_type = "string | undefined")]
    pub user: Option<String>,
    /// `inherit` (default): `environment` is added to the container's; `replace`: the
    /// command gets `environment` only.
    #[napi(ts_type = "'inherit' | 'replace' | undefined")]
    pub environment_mode: Option<String>,
}

/// A finished `exec`: its output, decoded as UTF-8 (invalid sequences replaced).
#[napi(object)]
pub struct ExecResult {
    /// Everything the command wrote to stdout.
    pub stdout: String,
    /// Everything the command wrote to stderr.
    pub stderr: String,
    /// The command's exit code; 128+N when signal N ended it.
    pub exit_code: i64,
}

/// One line of a command's output or of a container's log: decoded, ANSI escapes stripped,
/// without its newline.
#[napi(object)]
pub struct OutputLine {
    /// Which stream the line came from.
    #[napi(ts_type = "'stdout' | 'stderr'")]
    pub stream: String,
    /// The line, without its trailing newline.
    pub text: String,
}

impl From<output::OutputLine> for OutputLine {
    fn from(line: output::OutputLine) -> Self {
        OutputLine {
            stream: line.stream.as_str().to_string(),
            text: line.text,
        }
    }
}

/// `environmentMode`: `inherit` (default) adds `environment` to the container's; `replace`
/// gives the command `environment` only.
pub fn replaces_environment(mode: Option<&str>) -> Result<bool> {
    match mode {
        None | Some("inherit") => Ok(false),
        Some("replace") => Ok(true),
        Some(other) => Err(Error::invalid_argument(format!(
            "environmentMode '{other}' is neither 'inherit' nor 'replace'"
        ))),
    }
}

impl TryFrom<ContainerConfig> for container_runtime::ContainerConfig {
    type Error = Error;

    fn try_from(js: ContainerConfig) -> Result<Self> {
        let lifetime = match js.lifetime.as_deref() {
            None => Lifetime::default(),
            Some(text) => Lifetime::parse(text).ok_or_else(|| {
                Error::invalid_argument(format!("lifetime '{text}' is not 'process' or 'session'"))
            })?,
        };
        let present = |text: Option<String>| text.filter(|t| !t.is_empty());
        let restart_policy = match js.restart_policy.as_deref() {
            None => None,
            Some(text) => Some(RestartPolicy::parse(text).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "restartPolicy '{text}' is not 'no', 'unless-stopped', 'always' or 'on-failure'"
                ))
            })?),
        };
        Ok(container_runtime::ContainerConfig {
            id: present(js.id),
            name: present(js.name),
            image: js.image,
            working_directory: js.working_directory,
            mounts: js
                .mounts
                .into_iter()
                .map(|m| {
                    runtime::ContainerMount::bind(&m.source, &m.target, m.readonly.unwrap_or(false))
                })
                .collect(),
            command: js.command,
            environment: js.environment.unwrap_or_default().into_iter().collect(),
            memory: js.memory,
            cpu_shares: js.cpu_shares,
            resources: resources_from_js(js.resources, "resources")?,
            labels: js.labels.unwrap_or_default().into_iter().collect(),
            user: js.user,
            network: js.network,
            lifetime,
            ports: ports(js.ports.unwrap_or_default())?,
            restart_policy,
            sysctls: js.sysctls.unwrap_or_default().into_iter().collect(),
            privileges: ContainerPrivileges {
                cap_add: capabilities(js.cap_add.unwrap_or_default())?,
                ..Default::default()
            },
            egress: js.egress.map(egress_from_js).transpose()?,
            pull: pull_policy(js.pull)?,
            ..Default::default()
        })
    }
}

impl From<runtime::ContainerInfo> for ContainerInfo {
    fn from(info: runtime::ContainerInfo) -> Self {
        ContainerInfo {
            id: info.id,
            name: info.name,
            state: info.state.as_str().to_string(),
            pid: info.pid,
            started_at: info.started_at,
            stopped_at: info.stopped_at,
            exit_code: info.exit_code,
            image: info.image,
            labels: Some(info.labels.into_iter().collect()),
            mounts: Some(
                info.mounts
                    .into_iter()
                    .map(|m| ContainerMount {
                        source: m.source,
                        target: m.target,
                        readonly: Some(m.readonly),
                    })
                    .collect(),
            ),
        }
    }
}

impl TryFrom<ExecOptions> for ExecRequest {
    type Error = Error;

    fn try_from(js: ExecOptions) -> Result<Self> {
        Ok(ExecRequest {
            command: js.command,
            working_dir: js.working_directory,
            env: js.environment.unwrap_or_default().into_iter().collect(),
            stdin: js.stdin.map(String::into_bytes),
            timeout: duration_ms(js.timeout, "exec timeout")?,
            user: js.user,
            replace_env: replaces_environment(js.environment_mode.as_deref())?,
            ..Default::default()
        })
    }
}

impl From<ExecOutcome> for ExecResult {
    fn from(outcome: ExecOutcome) -> Self {
        ExecResult {
            stdout: String::from_utf8_lossy(&outcome.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&outcome.stderr).into_owned(),
            exit_code: outcome.exit_code,
        }
    }
}

fn ports(js: Vec<PortMapping>) -> Result<Vec<runtime::PortMapping>> {
    let port = |n: u32| {
        u16::try_from(n)
            .map_err(|_| Error::invalid_argument(format!("ports: {n} is not a port number")))
    };
    js.into_iter()
        .map(|p| {
            Ok(runtime::PortMapping {
                host: port(p.host)?,
                container: port(p.container)?,
                host_ip: p.host_ip.filter(|ip| !ip.is_empty()),
                protocol: p.protocol.filter(|p| !p.is_empty()),
            })
        })
        .collect()
}

/// `NET_ADMIN` or `CAP_NET_ADMIN`, as the engine takes them; anything else is not a
/// capability name.
fn capabilities(js: Vec<String>) -> Result<Vec<String>> {
    for cap in &js {
        let name = cap.strip_prefix("CAP_").unwrap_or(cap);
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
            return Err(Error::invalid_argument(format!(
                "capAdd: '{cap}' is not a capability name (e.g. 'NET_ADMIN')"
            )));
        }
    }
    Ok(js)
}
