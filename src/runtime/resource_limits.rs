//! A container's resource limits (`resources`: pids, memory, CPUs, open files): checked as
//! the host gives them, laid over one another (a session's over the `Workspaces` default),
//! and mapped onto the Engine API's HostConfig (`PidsLimit`, `Memory` with `MemorySwap`
//! equal to it, `NanoCpus`, the `nofile` ulimit).

use bollard::models::{HostConfig, ResourcesUlimits};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The least memory the engine accepts for a container (dockerd refuses less than 6 MiB).
pub const MIN_MEMORY: i64 = 6 << 20;
/// Below this many processes the container's init, keep-alive and session agent cannot run.
pub const MIN_PIDS: i64 = 8;
/// The kernel's own ceiling for pids (`PID_MAX_LIMIT` on 64-bit).
pub const MAX_PIDS: i64 = 1 << 22;
/// The least CPU share a quota expresses (1 ms per 100 ms period).
pub const MIN_NANO_CPUS: i64 = 10_000_000;
/// Open files: below this the shells and the agent fail; above it the kernel's default
/// `fs.nr_open` refuses the container's start.
pub const MIN_NOFILE: i64 = 16;
pub const MAX_NOFILE: i64 = 1 << 20;
/// A JavaScript number holds integers exactly up to here.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
/// The most CPUs a limit may name (an engine refuses more than it has in any case).
const MAX_CPUS: f64 = 4096.0;

/// The default pids limit of a `Workspaces` session when the host's `pid_max` cannot be read.
pub const DEFAULT_PIDS: i64 = 4096;

/// Limits as the engine takes them; `None`: the engine's (no limit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLimits {
    /// Processes and threads in the container's cgroup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids: Option<i64>,
    /// Bytes of memory; no swap on top of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<i64>,
    /// CPU time in billionths of a CPU (`cpus` × 1e9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nano_cpus: Option<i64>,
    /// Open files per process (soft and hard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nofile: Option<i64>,
}

/// `resources` as a JavaScript caller writes them: plain numbers, checked by `parse`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ResourceNumbers {
    pub pids: Option<f64>,
    pub memory: Option<f64>,
    pub cpus: Option<f64>,
    pub nofile: Option<f64>,
}

fn integer(what: &str, value: f64, min: i64, max: i64, unit: &str) -> Result<i64> {
    if !value.is_finite() || value.fract() != 0.0 || value.abs() > MAX_SAFE_INTEGER {
        return Err(Error::invalid_argument(format!(
            "{what} {value} must be a whole number of {unit}"
        )));
    }
    let n = value as i64;
    if n < min || n > max {
        return Err(Error::invalid_argument(format!(
            "{what} {n} is outside {min}..={max} {unit}"
        )));
    }
    Ok(n)
}

fn nano_cpus(what: &str, cpus: f64) -> Result<i64> {
    let nano = (cpus * 1e9).round();
    if !cpus.is_finite() || !(MIN_NANO_CPUS as f64..=MAX_CPUS * 1e9).contains(&nano) {
        return Err(Error::invalid_argument(format!(
            "{what} {cpus} must be a number of CPUs from 0.01 to {MAX_CPUS}"
        )));
    }
    Ok(nano as i64)
}

impl ResourceNumbers {
    /// Checked and converted; `context` names where they were given (`resources`, …).
    pub fn parse(&self, context: &str) -> Result<ResourceLimits> {
        let field = |name: &str| format!("{context}.{name}");
        Ok(ResourceLimits {
            pids: self
                .pids
                .map(|v| integer(&field("pids"), v, MIN_PIDS, MAX_PIDS, "processes"))
                .transpose()?,
            memory: self
                .memory
                .map(|v| integer(&field("memory"), v, MIN_MEMORY, i64::MAX, "bytes"))
                .transpose()?,
            nano_cpus: self
                .cpus
                .map(|v| nano_cpus(&field("cpus"), v))
                .transpose()?,
            nofile: self
                .nofile
                .map(|v| integer(&field("nofile"), v, MIN_NOFILE, MAX_NOFILE, "files"))
                .transpose()?,
        })
    }
}

impl ResourceLimits {
    /// Whether no limit is set.
    pub fn is_empty(&self) -> bool {
        *self == ResourceLimits::default()
    }

    /// The same bounds `ResourceNumbers::parse` applies (a config made in Rust).
    pub fn validate(&self, context: &str) -> Result<()> {
        let as_f64 = |v: Option<i64>| v.map(|n| n as f64);
        ResourceNumbers {
            pids: as_f64(self.pids),
            memory: as_f64(self.memory),
            cpus: self.nano_cpus.map(|n| n as f64 / 1e9),
            nofile: as_f64(self.nofile),
        }
        .parse(context)
        .map(|_| ())
    }

    /// Each limit this one sets, else `under`'s (field by field).
    pub fn over(self, under: ResourceLimits) -> ResourceLimits {
        ResourceLimits {
            pids: self.pids.or(under.pids),
            memory: self.memory.or(under.memory),
            nano_cpus: self.nano_cpus.or(under.nano_cpus),
            nofile: self.nofile.or(under.nofile),
        }
    }

    /// Fractional CPUs, when limited.
    pub fn cpus(&self) -> Option<f64> {
        self.nano_cpus.map(|n| n as f64 / 1e9)
    }

    /// Sets the engine's fields for each limit set: `MemorySwap` equals `Memory`, so the
    /// container gets no swap on top of its memory.
    pub fn apply(&self, host: &mut HostConfig) {
        if let Some(pids) = self.pids {
            host.pids_limit = Some(pids);
        }
        if let Some(memory) = self.memory {
            host.memory = Some(memory);
            host.memory_swap = Some(memory);
        }
        if let Some(nano) = self.nano_cpus {
            host.nano_cpus = Some(nano);
        }
        if let Some(nofile) = self.nofile {
            host.ulimits = Some(vec![ResourcesUlimits {
                name: Some("nofile".into()),
                soft: Some(nofile),
                hard: Some(nofile),
            }]);
        }
    }
}

/// Podman adds `RLIMIT_NPROC` 1048576 to any ulimit list that lacks it, which a service
/// without `CAP_SYS_RESOURCE` cannot raise to, and the container then fails to start. With
/// `nofile` set, `nproc` is given as the host's `pid_max` instead: no more than any user can
/// have at once anyway, so no limit in effect.
pub fn podman_nproc(host: &mut HostConfig, pid_max: Option<i64>) {
    let Some(ulimits) = host.ulimits.as_mut() else {
        return;
    };
    let has_nproc = ulimits.iter().any(|u| u.name.as_deref() == Some("nproc"));
    if let (false, Some(max)) = (has_nproc, pid_max) {
        ulimits.push(ResourcesUlimits {
            name: Some("nproc".into()),
            soft: Some(max),
            hard: Some(max),
        });
    }
}

/// A `Workspaces` session's default pids limit: `min(4096, pid_max / 8)`, so that one
/// session's fork bomb leaves at least 7/8 of the host's process table; 4096 when
/// `pid_max` is unknown.
pub fn default_pids_limit(pid_max: Option<i64>) -> i64 {
    match pid_max {
        Some(max) if max > 0 => DEFAULT_PIDS.min(max / 8).max(MIN_PIDS),
        _ => DEFAULT_PIDS,
    }
}

/// `/proc/sys/kernel/pid_max`, when readable.
pub fn host_pid_max() -> Option<i64> {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
#[path = "resource_limits_tests.rs"]
mod tests;
