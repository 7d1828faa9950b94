//! Options of `Workspaces.environment` (docs/contract.md §6): the shell's command-log
//! folder and per-command timeout, checked before anything is started.

use std::path::PathBuf;
use std::time::Duration;

use napi_derive::napi;

use crate::container_environment::ShellSettings;
use crate::error::{Error, Result};

/// The longest per-command timeout an environment's shell accepts: 24 hours.
const MAX_TIMEOUT_MS: f64 = 86_400_000.0;

/// Options of `Workspaces.environment`.
#[napi(object, object_to_js = false)]
pub struct EnvironmentOptions {
    /// Host directory for the shell's command logs; default
    /// `${os.tmpdir()}/container-isolation`.
    pub log_dir: Option<String>,
    /// The shell's per-command timeout, 1..86400000 ms (24 h); default 300000.
    pub timeout_ms: Option<f64>,
}

/// The shell settings `opts` asks for; `INVALID_ARGUMENT` for a timeout outside 1 ms..24 h.
pub fn shell_settings(opts: Option<EnvironmentOptions>) -> Result<ShellSettings> {
    let Some(opts) = opts else {
        return Ok(ShellSettings::default());
    };
    let timeout = match opts.timeout_ms {
        None => None,
        Some(ms) if ms.is_finite() && (1.0..=MAX_TIMEOUT_MS).contains(&ms) => {
            Some(Duration::from_millis(ms.ceil() as u64))
        }
        Some(ms) => {
            return Err(Error::invalid_argument(format!(
                "environment timeoutMs {ms} must be between 1 and {MAX_TIMEOUT_MS} milliseconds"
            )))
        }
    };
    Ok(ShellSettings {
        log_dir: opts.log_dir.filter(|d| !d.is_empty()).map(PathBuf::from),
        timeout,
    })
}
