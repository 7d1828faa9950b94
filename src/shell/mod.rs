//! Magenta's `Shell` inside a container (docs/contract.md §4).

mod abandoned_run;
mod agent_run;
mod command_host;
mod command_log;
mod docker_shell;
mod engine_run;
mod line_sink;
mod run_end;
mod shell_command;
mod shell_options;
mod shell_result;
mod shell_terminal;
mod stop;

pub use command_host::{AgentFuture, AgentSource, CommandHost};
pub use command_log::{log_path, validate_segment};
pub use docker_shell::DockerShell;
pub use line_sink::OutputLimits;
pub use shell_command::ShellCommand;
pub use shell_options::{default_log_dir, ShellOptions, DEFAULT_TIMEOUT};
pub use shell_result::ShellResult;
