//! The `DockerShell` class (docs/contract.md §4): converts options, bridges `onOutput`/`onStart`,
//! and releases both callbacks as soon as the command ends (`execute` settling once
//! `onOutput` has seen every line).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use napi::bindgen_prelude::{Either, Undefined};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use super::container_types::OutputLine;
use super::durations::duration_ms;
use super::engine::{engine_options, EngineOptions};
use super::error::{sync_error, Code, Outcome};
use super::line_delivery::LineDelivery;
use super::runtime_calls::LineCallback;
use super::terminal::{terminal_request, Terminal, TerminalOptions};
use crate::shell;

/// Options of `new DockerShell()`.
#[napi(object, object_to_js = false)]
pub struct DockerShellOptions {
    /// The container's name or id.
    pub container: String,
    /// Absolute container path the commands run in.
    pub cwd: String,
    /// Names the log directory (`${logDir}/threads/<threadId>`); a plain file name, else
    /// `INVALID_ARGUMENT`.
    pub thread_id: String,
    /// Host directory for command logs; default `${os.tmpdir()}/container-isolation`.
    pub log_dir: Option<String>,
    /// Per command; default 300000.
    pub timeout_ms: Option<f64>,
    /// Added to every command's environment.
    pub env: Option<HashMap<String, String>>,
    /// Who runs the commands (a name, `uid` or `uid:gid`); default the container's user.
    pub user: Option<String>,
    /// Program and leading arguments; default `['bash', '-c']`, or `['/bin/sh', '-c']`
    /// where the image has no bash.
    pub shell: Option<Vec<String>>,
    /// Which engine to talk to; default: auto-detected (see `detectEngine`).
    pub engine: Option<EngineOptions>,
    /// The most lines `ShellResult.output` keeps (the last ones; the log file has all);
    /// default 100000.
    pub max_output_lines: Option<u32>,
    /// The most bytes of text `ShellResult.output` keeps; default 16 MiB.
    pub max_output_bytes: Option<u32>,
    /// Default true: run commands through the container's session agent where it runs
    /// (every process a command starts is killed by `terminate()`). False: engine execs.
    pub agent: Option<bool>,
}

pub type StartCallback = ThreadsafeFunction<(), (), (), napi::Status, false>;

/// Options of `DockerShell.execute`.
#[napi(object, object_to_js = false)]
pub struct ExecuteOptions {
    /// Names the command's log file (`tools/<toolRequestId>/bashCommand.log`); a plain file
    /// name, else `INVALID_ARGUMENT`.
    pub tool_request_id: String,
    /// Called with each line as it is printed.
    #[napi(ts_type = "(line: OutputLine) => void")]
    pub on_output: Option<LineCallback>,
    /// Called once the command has started.
    #[napi(ts_type = "() => void")]
    pub on_start: Option<StartCallback>,
}

/// A finished `execute`: Magenta's `ShellResult`.
#[napi(object)]
pub struct ShellResult {
    /// The command's exit code; 128+N when signal N ended it; non-zero (124 for a 0) after
    /// a timeout.
    pub exit_code: i64,
    /// Set when `terminate()` ended the command. The key is always present, as in
    /// Magenta's type.
    #[napi(ts_type = "NodeJS.Signals | undefined")]
    pub signal: Either<String, Undefined>,
    /// The last lines of output, both streams, within `maxOutputLines`/`maxOutputBytes`.
    pub output: Vec<OutputLine>,
    /// How many earlier lines `output` leaves out (beyond `maxOutputLines`/`maxOutputBytes`;
    /// the log file has them).
    pub omitted_lines: f64,
    /// The host file holding the command and every line of its output.
    #[napi(ts_type = "string | undefined")]
    pub log_file_path: Either<String, Undefined>,
    /// Wall time of the command, in milliseconds.
    pub duration_ms: f64,
}

fn present_or_undefined(value: Option<String>) -> Either<String, Undefined> {
    match value {
        Some(v) => Either::A(v),
        None => Either::B(()),
    }
}

/// Magenta's `Shell` in a container: one command at a time (a second `execute` waits), each
/// killed with every process it started on `terminate()` or timeout.
#[napi]
pub struct DockerShell {
    inner: Arc<shell::DockerShell>,
}

pub fn shell_options(opts: DockerShellOptions) -> crate::error::Result<shell::ShellOptions> {
    Ok(shell::ShellOptions {
        container: opts.container,
        cwd: opts.cwd,
        thread_id: opts.thread_id,
        log_dir: opts
            .log_dir
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(shell::default_log_dir),
        timeout: duration_ms(opts.timeout_ms, "shell timeoutMs")?.unwrap_or(shell::DEFAULT_TIMEOUT),
        env: opts.env.unwrap_or_default().into_iter().collect(),
        replace_env: false,
        user: opts.user,
        shell: opts.shell,
        host: shell::CommandHost::Engine {
            engine: Box::new(engine_options(opts.engine)?),
            agent: opts.agent.unwrap_or(true),
        },
        output_limits: output_limits(opts.max_output_lines, opts.max_output_bytes)?,
    })
}

fn output_limits(
    lines: Option<u32>,
    bytes: Option<u32>,
) -> crate::error::Result<shell::OutputLimits> {
    let defaults = shell::OutputLimits::default();
    if lines == Some(0) || bytes == Some(0) {
        return Err(crate::error::Error::invalid_argument(
            "maxOutputLines and maxOutputBytes must be at least 1",
        ));
    }
    Ok(shell::OutputLimits {
        max_lines: lines.map_or(defaults.max_lines, |n| n as usize),
        max_bytes: bytes.map_or(defaults.max_bytes, |n| n as usize),
    })
}

impl DockerShell {
    pub fn from_core(inner: shell::DockerShell) -> Self {
        DockerShell {
            inner: Arc::new(inner),
        }
    }
}

#[napi]
impl DockerShell {
    /// Checks the options only (`INVALID_ARGUMENT`); the container is first reached by
    /// `execute`.
    #[napi(constructor)]
    pub fn new(opts: DockerShellOptions) -> napi::Result<Self, Code> {
        let options = shell_options(opts).map_err(sync_error)?;
        Ok(DockerShell::from_core(
            shell::DockerShell::new(options).map_err(sync_error)?,
        ))
    }

    /// Opens a terminal in the shell's container: its `cwd`, user and environment unless
    /// `opts` names others (docs/contract.md §9).
    #[napi(ts_return_type = "Promise<Terminal>")]
    pub async fn terminal(&self, opts: TerminalOptions) -> Outcome<Terminal> {
        async {
            let request = terminal_request(opts)?;
            let (input, output, guard) = self.inner.open_terminal(request).await?;
            Ok(Terminal::new(input, output, Some(guard)))
        }
        .await
        .into()
    }

    /// Runs `command` in the container; output arrives line by line on `onOutput`. A
    /// string runs under the shell; an array is run as argv with no shell in between.
    #[napi(
        ts_args_type = "command: string | string[], opts: ExecuteOptions",
        ts_return_type = "Promise<ShellResult>"
    )]
    pub async fn execute(
        &self,
        command: Either<String, Vec<String>>,
        opts: ExecuteOptions,
    ) -> Outcome<ShellResult> {
        let command = match command {
            Either::A(script) => shell::ShellCommand::Script(script),
            Either::B(argv) => shell::ShellCommand::Argv(argv),
        };
        let shell = self.inner.clone();
        let ExecuteOptions {
            tool_request_id,
            on_output,
            on_start,
        } = opts;
        let lines = LineDelivery::new(on_output);
        let result = shell
            .execute(
                &command,
                &tool_request_id,
                |line| lines.send(line.clone().into()),
                || {
                    if let Some(callback) = &on_start {
                        callback.call((), ThreadsafeFunctionCallMode::NonBlocking);
                    }
                },
            )
            .await;
        drop(on_start);
        lines.finished().await;
        result
            .map(|r| ShellResult {
                exit_code: r.exit_code,
                signal: present_or_undefined(r.signal.map(str::to_string)),
                output: r.output.into_iter().map(OutputLine::from).collect(),
                omitted_lines: r.omitted_lines as f64,
                log_file_path: present_or_undefined(r.log_file_path),
                duration_ms: r.duration_ms as f64,
            })
            .into()
    }

    /// SIGTERM to the running command's whole process tree inside the container, SIGKILL
    /// after 1 s to whatever survives; the pending `execute` resolves with `signal` set.
    #[napi]
    pub fn terminate(&self) {
        self.inner.terminate();
    }
}
