//! `DockerShell`: runs one agent command at a time inside a container, streaming its output
//! line by line, logging it on the host, and terminating its whole process tree inside the
//! container on `terminate()` or timeout (SIGTERM, SIGKILL after a grace period).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::OnceCell;

use super::abandoned_run::{Leftover, LeftoverSlot};
use super::agent_run;
use super::command_host::Reached;
use super::command_log::{log_path, validate_segment, PendingLog};
use super::engine_run::EngineRun;
use super::line_sink::LineSink;
use super::run_end::{Ending, RunEnd};
use super::shell_command::ShellCommand;
use super::shell_options::ShellOptions;
use super::shell_result::ShellResult;
use super::stop::{Stop, StopSignal};
use crate::agent::{connection_user, AgentConnection, AgentProcess, Creds, Spawn};
use crate::error::{Error, Result};
use crate::output::{OutputLine, StreamKind};
use crate::runtime::exec::{self, ExecRequest};
use crate::runtime::process_kill::{ExecTree, Signal};
use crate::runtime::{begin_use, path_exists, ContainerUse};

/// Exit code reported for a timed-out command that exited 0 (as GNU `timeout` does).
const TIMED_OUT_EXIT: i64 = 124;

const BASH_PATHS: [&str; 3] = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"];

pub struct DockerShell {
    options: ShellOptions,
    program: OnceCell<Vec<String>>,
    /// Stops the running command; `None` while idle.
    running: Mutex<Option<Arc<StopSignal>>>,
    turn: tokio::sync::Mutex<()>,
    usage: Option<Arc<dyn ContainerUse>>,
}

/// Clears the terminate handle when a command ends, however it ends.
struct RunningGuard<'a>(&'a Mutex<Option<Arc<StopSignal>>>);

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

impl DockerShell {
    pub fn new(options: ShellOptions) -> Result<DockerShell> {
        validate_segment("threadId", &options.thread_id)?;
        if !options.cwd.starts_with('/') {
            return Err(Error::invalid_argument(format!(
                "shell cwd '{}' must be an absolute container path",
                options.cwd
            )));
        }
        if let Some(shell) = &options.shell {
            if shell.first().is_none_or(|p| p.is_empty()) {
                return Err(Error::invalid_argument("shell must name a program"));
            }
        }
        crate::runtime::check_environment(&options.env, "DockerShell env")?;
        Ok(DockerShell {
            options,
            program: OnceCell::new(),
            running: Mutex::new(None),
            turn: tokio::sync::Mutex::new(()),
            usage: None,
        })
    }

    /// Runs `usage` before every command, held until it ends (a workspace's idle tracking).
    pub fn with_usage(mut self, usage: Arc<dyn ContainerUse>) -> Self {
        self.usage = Some(usage);
        self
    }

    pub fn options(&self) -> &ShellOptions {
        &self.options
    }

    /// What tracks the shell's uses of its container, if anything.
    pub(super) fn usage(&self) -> Option<&Arc<dyn ContainerUse>> {
        self.usage.as_ref()
    }

    /// Signals the running command's tree (SIGTERM, SIGKILL after 1 s); its `execute`
    /// resolves with `signal` set, within `stop::SETTLE` whatever the container does. A
    /// no-op when nothing runs.
    pub fn terminate(&self) {
        if let Some(stop) = &*self.running.lock().unwrap_or_else(|e| e.into_inner()) {
            stop.fire();
        }
    }

    /// Runs `command` under the shell in `cwd`, stdin closed. Commands of one shell run one
    /// after another; a second call waits for the first to end.
    pub async fn execute(
        &self,
        command: &ShellCommand,
        tool_request_id: &str,
        on_output: impl FnMut(&OutputLine) + Send,
        on_start: impl FnOnce() + Send,
    ) -> Result<ShellResult> {
        validate_segment("toolRequestId", tool_request_id)?;
        command.validate()?;
        let shown = command.display();
        let _turn = self.turn.lock().await;
        let started_at = Instant::now();
        let signal = Arc::new(StopSignal::default());
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some(signal.clone());
        let _guard = RunningGuard(&self.running);
        let path = log_path(
            &self.options.log_dir,
            &self.options.thread_id,
            tool_request_id,
        );
        let log = PendingLog::start(path, shown.clone());
        let mut sink = LineSink::new(log, on_output, self.options.output_limits);
        let stop = Stop {
            terminate: &signal,
            deadline: tokio::time::Instant::from_std(started_at + self.options.timeout),
        };
        let leftover = LeftoverSlot::default();
        let work = self.run_command(command, &stop, &mut sink, &leftover, on_start);
        let end = match stop.settle(work).await {
            Some(end) => end?,
            None => {
                // Stopped, and not settled in time: answered now, killed in the background.
                leftover.kill_in_background();
                sink.finish().await;
                RunEnd {
                    ending: Some(stop.why()),
                    killed: true,
                    exit: Err(Error::new(
                        crate::error::ErrorCode::EngineError,
                        "the command's end was not reported in time after it was stopped",
                    )),
                }
            }
        };
        self.result(end, sink, started_at).await
    }

    /// Starts `command` (through the agent where it runs, else an engine exec) and runs it
    /// to its end or its stop.
    async fn run_command<F: FnMut(&OutputLine) + Send>(
        &self,
        command: &ShellCommand,
        stop: &Stop<'_>,
        sink: &mut LineSink<F>,
        leftover: &LeftoverSlot,
        on_start: impl FnOnce() + Send,
    ) -> Result<RunEnd> {
        let _use = begin_use(self.usage.as_ref()).await?;
        let container = self.options.container.as_str();
        let reached = self.options.host.reach(container).await?;
        let argv = match command {
            ShellCommand::Script(script) => {
                let mut argv = self.program(&reached).await?.clone();
                argv.push(script.clone());
                argv
            }
            ShellCommand::Argv(argv) => argv.clone(),
        };
        let stop = Stop {
            terminate: stop.terminate,
            deadline: stop.deadline,
        };
        match reached {
            Reached {
                agent: Some(connection),
                ..
            } => {
                let spawn = self.spawn_request(&connection, argv).await?;
                let process = AgentProcess::spawn(&connection, spawn).await?;
                leftover.set(Leftover::Agent(process.control()));
                on_start();
                agent_run::run(process, stop, sink).await
            }
            Reached {
                engine: Some(engine),
                agent: None,
            } => {
                let request = ExecRequest {
                    command: argv,
                    working_dir: Some(self.options.cwd.clone()),
                    env: self.options.env.clone(),
                    replace_env: self.options.replace_env,
                    user: self.options.user.clone(),
                    ..Default::default()
                };
                let started = exec::start(&engine, container, &request).await?;
                leftover.set(Leftover::Engine(ExecTree {
                    engine: engine.clone(),
                    container: container.to_string(),
                    exec_id: started.exec_id.clone(),
                    token: started.token.clone(),
                }));
                on_start();
                let run = EngineRun {
                    engine: &engine,
                    container,
                    exec_id: started.exec_id.clone(),
                    token: started.token.clone(),
                    what: exec::subject(container, &[command.display()]),
                };
                run.run(started, stop, sink).await
            }
            Reached {
                engine: None,
                agent: None,
            } => Err(Error::new(
                crate::error::ErrorCode::Unsupported,
                format!(
                    "container '{container}' has neither an engine nor an agent to run commands"
                ),
            )),
        }
    }

    async fn result<F: FnMut(&OutputLine) + Send>(
        &self,
        end: RunEnd,
        mut sink: LineSink<F>,
        started_at: Instant,
    ) -> Result<ShellResult> {
        let signal = match end.ending {
            Some(Ending::Terminated) => Some(if end.killed {
                Signal::Kill
            } else {
                Signal::Term
            }),
            _ => None,
        };
        let exit_code = match (end.ending, end.exit, signal) {
            // Ended by our signal: reported as a shell reports a signalled command.
            (_, _, Some(signal)) => 128 + signal.number() as i64,
            (Some(Ending::TimedOut), Ok(0), _) => TIMED_OUT_EXIT,
            (_, Ok(code), _) => code,
            (Some(_), Err(_), _) => 128 + if end.killed { 9 } else { 15 },
            (None, Err(err), _) => return Err(err),
        };
        if end.ending == Some(Ending::TimedOut) {
            let line = OutputLine {
                stream: StreamKind::Stderr,
                text: format!(
                    "Command timed out after {} ms and was terminated",
                    self.options.timeout.as_millis()
                ),
            };
            sink.line(line).await;
        }
        let (output, omitted_lines, log) = sink.into_parts().await;
        let log_file_path = log
            .as_ref()
            .map(|l| l.path().to_string_lossy().into_owned());
        if let Some(log) = log {
            log.finish(exit_code, signal.map(Signal::node_name));
        }
        Ok(ShellResult {
            exit_code,
            signal: signal.map(Signal::node_name),
            output,
            omitted_lines,
            log_file_path,
            duration_ms: started_at.elapsed().as_millis() as u64,
        })
    }

    /// The command as the agent runs it: as the shell's user (else the container's), with
    /// the shell's environment added to the container's.
    async fn spawn_request(
        &self,
        connection: &Arc<AgentConnection>,
        argv: Vec<String>,
    ) -> Result<Spawn> {
        let user = connection_user(connection, self.options.user.as_deref()).await?;
        Ok(Spawn {
            argv,
            cwd: Some(self.options.cwd.clone()),
            replace_env: self.options.replace_env,
            env: self.options.env.clone().into_iter().collect(),
            creds: user.creds(),
            home: user.home.clone(),
            stdin: false,
        })
    }

    /// `shell` as given, else `bash -c` where the image has bash, else `/bin/sh -c`.
    async fn program(&self, reached: &Reached) -> Result<&Vec<String>> {
        self.program
            .get_or_try_init(|| async {
                if let Some(shell) = &self.options.shell {
                    return Ok(shell.clone());
                }
                for path in BASH_PATHS {
                    let exists = match &reached.agent {
                        Some(connection) => agent_path_exists(connection, path).await,
                        None => None,
                    };
                    let exists = match (exists, &reached.engine) {
                        (Some(exists), _) => exists,
                        (None, Some(engine)) => {
                            path_exists(engine, &self.options.container, path).await?
                        }
                        (None, None) => false,
                    };
                    if exists {
                        return Ok(vec![path.to_string(), "-c".to_string()]);
                    }
                }
                Ok(vec!["/bin/sh".to_string(), "-c".to_string()])
            })
            .await
    }
}

/// Whether `path` exists, asked of the agent as root; `None` when it cannot say.
async fn agent_path_exists(connection: &Arc<AgentConnection>, path: &str) -> Option<bool> {
    let files = crate::agent::AgentFiles {
        connection: connection.clone(),
        creds: Creds::default(),
    };
    files.stat(path, true).await.ok().map(|s| s.is_some())
}
