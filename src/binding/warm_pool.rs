//! `Workspaces`' warm pool (docs/contract.md §6, "Warm pools"): its options and its status
//! as JavaScript sees them; the pool itself is `crate::warm_pool`'s.

use napi_derive::napi;

use crate::error::{Error, Result};
use crate::warm_pool::{PoolOptions, PoolStatus};

/// The `pool` option of `new Workspaces()`.
#[napi(object, object_to_js = false)]
pub struct WarmPoolOptions {
    /// Containers kept created and started for the settings of the latest session
    /// (1..16).
    pub size: u32,
    /// Members are made only while the host's 1-minute load average per CPU is at most
    /// this (default `$CONTAINER_ISOLATION_POOL_MAX_LOAD`, else 1.5).
    pub max_load_per_cpu: Option<f64>,
    /// Members are made only while the host has at least this many bytes of memory
    /// available, plus a member's own memory limit (default 512 MiB).
    pub min_available_memory: Option<f64>,
}

/// What `poolStatus()` and `poolReady()` report.
#[napi(object, object_from_js = false)]
pub struct WarmPoolStatus {
    /// The `size` option.
    pub size: u32,
    /// Members ready to be claimed.
    pub ready: u32,
    /// Whether a member is being made now.
    pub filling: bool,
    /// Members made so far.
    pub made: f64,
    /// Members claimed by sessions so far.
    pub claimed: f64,
    /// Members removed unclaimed because the settings they were made for were replaced.
    pub retired: f64,
    /// Why no member is being made though the pool is not full: the host's load or memory.
    pub waiting_for_host: Option<String>,
    /// The code of the last failure to make a member.
    pub last_error_code: Option<String>,
    /// The message of the last failure to make a member.
    pub last_error: Option<String>,
}

impl From<PoolStatus> for WarmPoolStatus {
    fn from(status: PoolStatus) -> Self {
        WarmPoolStatus {
            size: status.size,
            ready: status.ready,
            filling: status.filling,
            made: status.made as f64,
            claimed: status.claimed as f64,
            retired: status.retired as f64,
            waiting_for_host: status.waiting_for_host,
            last_error_code: status
                .last_error
                .as_ref()
                .map(|e| e.code.as_str().to_string()),
            last_error: status.last_error.map(|e| e.message),
        }
    }
}

/// Replaces the default `maxLoadPerCpu` (a positive number).
const MAX_LOAD_ENV: &str = "CONTAINER_ISOLATION_POOL_MAX_LOAD";

/// The pool's options, checked (`INVALID_ARGUMENT`).
pub fn pool_options(opts: Option<WarmPoolOptions>) -> Result<Option<PoolOptions>> {
    let Some(opts) = opts else {
        return Ok(None);
    };
    let defaults = PoolOptions::default();
    let memory = match opts.min_available_memory {
        None => defaults.min_available_memory,
        Some(bytes) if bytes.is_finite() && bytes >= 0.0 => bytes as u64,
        Some(bytes) => {
            return Err(Error::invalid_argument(format!(
                "pool.minAvailableMemory {bytes} is not a number of bytes"
            )))
        }
    };
    // The host's own default, for hosts (an MCP server) that give only a size.
    let default_load = std::env::var(MAX_LOAD_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| *v > 0.0)
        .unwrap_or(defaults.max_load_per_cpu);
    let options = PoolOptions {
        size: opts.size,
        max_load_per_cpu: opts.max_load_per_cpu.unwrap_or(default_load),
        min_available_memory: memory,
    };
    options.validate()?;
    Ok(Some(options))
}
