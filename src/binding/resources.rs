//! `resources` (pids, memory, CPUs, open files) as JavaScript gives and reads them; the
//! checks and the engine mapping are the core's (`runtime::resource_limits`).

use napi_derive::napi;

use crate::error::Result;
use crate::runtime::{ResourceLimits, ResourceNumbers};

/// Resource limits of a container. Each one absent is the engine's (no limit) unless a
/// default applies (a `Workspaces` session's `pids`).
#[napi(object)]
#[derive(Clone, Copy)]
pub struct Resources {
    /// Most processes and threads at once (the cgroup's `pids.max`), 8 to 4194304.
    #[napi(ts_type = "number | undefined")]
    pub pids: Option<f64>,
    /// Bytes of memory, at least 6 MiB (6291456); no swap on top of it (`MemorySwap` is set
    /// equal).
    #[napi(ts_type = "number | undefined")]
    pub memory: Option<f64>,
    /// Fractional CPUs of time (`1.5`: one and a half), at least 0.01.
    #[napi(ts_type = "number | undefined")]
    pub cpus: Option<f64>,
    /// Most open files per process (soft and hard `nofile`), 16 to 1048576.
    #[napi(ts_type = "number | undefined")]
    pub nofile: Option<f64>,
}

/// Checked (`INVALID_ARGUMENT` naming `context.field`) and converted.
pub fn resources_from_js(js: Option<Resources>, context: &str) -> Result<ResourceLimits> {
    match js {
        None => Ok(ResourceLimits::default()),
        Some(r) => ResourceNumbers {
            pids: r.pids,
            memory: r.memory,
            cpus: r.cpus,
            nofile: r.nofile,
        }
        .parse(context),
    }
}

impl From<ResourceLimits> for Resources {
    fn from(limits: ResourceLimits) -> Self {
        let number = |v: Option<i64>| v.map(|n| n as f64);
        Resources {
            pids: number(limits.pids),
            memory: number(limits.memory),
            cpus: limits.cpus(),
            nofile: number(limits.nofile),
        }
    }
}
