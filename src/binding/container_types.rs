//! The plain objects of docs/contract.md §2 as JavaScript sees them, and their conversions.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use napi_derive::napi;

use crate::error::{Error, Result};
use crate::output;
use crate::runtime::{
    self, ContainerPrivileges, ExecOutcome, ExecRequest, Lifetime, RestartPolicy,
};

#[napi(object)]
pub struct ContainerMount {
    pub source: String,
    pub target: String,
    #[napi(ts_type = "boolean | undefined")]
    pub readonly: Option<bool>,
}

/// A container port published on the host.
#[napi(object)]
pub struct PortMapping {
    /// 0: the engine picks a free port.
    pub host: u32,
    pub container: u32,
    /// Default '127.0.0.1' (this machine only); '0.0.0.0' publishes on every interface.
    #[napi(ts_type = "string | undefined")]
    pub host_ip: Option<String>,
    #[napi(ts_type = "'tcp' | 'udp' | 'sctp' | undefined")]
    pub protocol: Option<String>,
}

#[napi(object)]
pub struct ContainerConfig {
    #[napi(ts_type = "string | undefined")]
    pub id: Option<String>,
    #[napi(ts_type = "string | undefined")]
    pub name: Option<String>,
    #[napi(ts_type = "string | undefined")]
    pub image: Option<String>,
    pub working_directory: String,
    pub mounts: Vec<ContainerMount>,
    /// Given: a job whose main process is this command. Absent: a sandbox kept alive.
    #[napi(ts_type = "Array<string> | undefined")]
    pub command: Option<Vec<String>>,
    #[napi(ts_type = "Record<string, string> | undefined")]
    pub environment: Option<HashMap<String, String>>,
    /// Bytes.
    #[napi(ts_type = "number | undefined")]
    pub memory: Option<i64>,
    /// Relative CPU weight.
    #[napi(ts_type = "number | undefined")]
    pub cpu_shares: Option<i64>,
    #[napi(ts_type = "Record<string, string> | undefined")]
    pub labels: Option<HashMap<String, String>>,
    #[napi(ts_type = "string | undefined")]
    pub user: Option<String>,
    /// 'none' | 'bridge' | a network name.
    #[napi(ts_type = "string | undefined")]
    pub network: Option<String>,
    /// Default 'session': kept until removed. 'process': reaped once this process is gone.
    #[napi(ts_type = "'process' | 'session' | undefined")]
    pub lifetime: Option<String>,
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
}

#[napi(object)]
pub struct ContainerInfo {
    pub id: String,
    pub name: Option<String>,
    #[napi(ts_type = "'created' | 'running' | 'stopped' | 'failed'")]
    pub state: String,
    pub pid: Option<u32>,
    pub started_at: Option<DateTime<Utc>>,
    pub stopped_at: Option<DateTime<Utc>>,
    pub exit_code: Option<i64>,
    pub image: Option<String>,
    pub labels: Option<HashMap<String, String>>,
    /// Bind mounts (host path → container path).
    pub mounts: Option<Vec<ContainerMount>>,
}

#[napi(object)]
pub struct ExecOptions {
    pub command: Vec<String>,
    #[napi(ts_type = "string | undefined")]
    pub working_directory: Option<String>,
    #[napi(ts_type = "Record<string, string> | undefined")]
    pub environment: Option<HashMap<String, String>>,
    #[napi(ts_type = "string | undefined")]
    pub stdin: Option<String>,
    /// Milliseconds; on expiry the command's processes are killed and the call rejects
    /// with TIMEOUT.
    #[napi(ts_type = "number | undefined")]
    pub timeout: Option<f64>,
    #[napi(ts_type = "string | undefined")]
    pub user: Option<String>,
    #[napi(ts_type = "'inherit' | 'replace' | undefined")]
    pub environment_mode: Option<String>,
}

#[napi(object)]
pub struct ExecResult {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: i64,
}

#[napi(object)]
pub struct OutputLine {
    #[napi(ts_type = "'stdout' | 'stderr'")]
    pub stream: String,
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

pub fn duration_ms(ms: Option<f64>, what: &str) -> Result<Option<Duration>> {
    match ms {
        None => Ok(None),
        Some(ms) if ms.is_finite() && ms >= 0.0 => {
            Ok(Some(Duration::from_millis(ms.ceil() as u64)))
        }
        Some(ms) => Err(Error::invalid_argument(format!(
            "{what} {ms} must be a non-negative number of milliseconds"
        ))),
    }
}

impl TryFrom<ContainerConfig> for runtime::ContainerConfig {
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
        Ok(runtime::ContainerConfig {
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
