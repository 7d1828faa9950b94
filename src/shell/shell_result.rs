//! What one `execute` returns.

use crate::output::OutputLine;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellResult {
    pub exit_code: i64,
    /// `SIGTERM`/`SIGKILL` when `terminate()` ended the command.
    pub signal: Option<&'static str>,
    /// The last lines of output, within the shell's output limits.
    pub output: Vec<OutputLine>,
    /// How many earlier lines `output` leaves out (the log file has them).
    pub omitted_lines: u64,
    pub log_file_path: Option<String>,
    pub duration_ms: u64,
}
