//! The plain objects of CONTRACT §2 as JavaScript sees them, and their conversions.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use napi_derive::napi;

use crate::error::{Error, Result};
use crate::output;
use crate::runtime::{self, ExecOutcome, ExecRequest, Lifetime};

#[napi(object)]
pub struct ContainerMount {
    pub source: String,
    pub target: String,
    pub readonly: Option<bool>,
}

#[napi(object)]
pub struct ContainerConfig {
    pub id: Option<String>,
    pub name: Option<String>,
    pub image: Option<String>,
    pub working_directory: String,
    pub mounts: Vec<ContainerMount>,
    /// Given: a job whose main process is this command. Absent: a sandbox kept alive.
    pub command: Option<Vec<String>>,
    pub environment: Option<HashMap<String, String>>,
    /// Bytes.
    pub memory: Option<i64>,
    /// Relative CPU weight.
    pub cpu_shares: Option<i64>,
    pub labels: Option<HashMap<String, String>>,
    pub user: Option<String>,
    /// 'none' | 'bridge' | a network name.
    pub network: Option<String>,
    /// Default 'session': kept until removed. 'process': reaped once this process is gone.
    #[napi(ts_type = "'process' | 'session'")]
    pub lifetime: Option<String>,
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
}

#[napi(object)]
pub struct ExecOptions {
    pub command: Vec<String>,
    pub working_directory: Option<String>,
    pub environment: Option<HashMap<String, String>>,
    pub stdin: Option<String>,
    /// Milliseconds; on expiry the command's processes are killed and the call rejects
    /// with TIMEOUT.
    pub timeout: Option<f64>,
    pub user: Option<String>,
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
        Ok(runtime::ContainerConfig {
            id: js.id,
            name: js.name,
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
