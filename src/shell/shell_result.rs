//! What one `execute` returns.

use crate::output::OutputLine;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellResult {
    pub exit_code: i64,
    /// `SIGTERM`/`SIGKILL` when `terminate()` ended the command.
    pub signal: Option<&'static str>,
    pub output: Vec<OutputLine>,
    pub log_file_path: Option<String>,
    pub duration_ms: u64,
}
