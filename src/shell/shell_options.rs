//! How a `DockerShell` runs its commands (docs/contract.md §4).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::command_host::CommandHost;
use super::line_sink::OutputLimits;

pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(300_000);

#[derive(Debug, Clone)]
pub struct ShellOptions {
    pub container: String,
    pub cwd: String,
    pub thread_id: String,
    pub log_dir: PathBuf,
    pub timeout: Duration,
    pub env: BTreeMap<String, String>,
    /// `env` is the whole environment of each command, not an addition to the container's.
    pub replace_env: bool,
    pub user: Option<String>,
    /// The program and leading arguments the command string is appended to; `None` picks
    /// `bash -c`, or `/bin/sh -c` where the image has no bash.
    pub shell: Option<Vec<String>>,
    /// Where the commands run.
    pub host: CommandHost,
    /// How much output `ShellResult.output` keeps.
    pub output_limits: OutputLimits,
}

/// `${os.tmpdir()}/container-isolation`.
pub fn default_log_dir() -> PathBuf {
    std::env::temp_dir().join("container-isolation")
}
