//! `DockerShell`: runs one agent command at a time inside a container, streaming its output
//! line by line, logging it on the host, and terminating its whole process tree inside the
//! container on `terminate()` or timeout (SIGTERM, SIGKILL after a grace period).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::{Notify, OnceCell};
use tokio::time::sleep_until;

use super::command_log::{log_path, validate_segment, CommandLog};
use super::shell_command::ShellCommand;
use super::shell_options::ShellOptions;
use super::shell_result::ShellResult;
use crate::engine::{from_bollard, Engine, FrameDemux};
use crate::error::{Error, Result};
use crate::output::{OutputDecoder, OutputLine, StreamKind};
use crate::runtime::exec::{self, ExecRequest};
use crate::runtime::process_kill::{signal_exec_tree, tree_alive, Signal};
use crate::runtime::{path_exists, ContainerUse, UseGuard};

/// Between SIGTERM and SIGKILL.
const TERMINATE_GRACE: Duration = Duration::from_secs(1);
/// After SIGKILL, how long the output stream may stay open before we stop waiting.
const KILL_DRAIN: Duration = Duration::from_secs(2);
/// Exit code reported for a timed-out command that exited 0 (as GNU `timeout` does).
const TIMED_OUT_EXIT: i64 = 124;

const BASH_PATHS: [&str; 3] = ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"];

pub struct DockerShell {
    options: ShellOptions,
    program: OnceCell<Vec<String>>,
    /// Wakes the running command's loop to terminate it; `None` while idle.
    running: Mutex<Option<Arc<Notify>>>,
    turn: tokio::sync::Mutex<()>,
    usage: Option<Arc<dyn ContainerUse>>,
}

/// What identifies the running command's process tree.
struct TreeRef {
    exec_id: String,
    token: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    Terminated,
    TimedOut,
}

#[derive(Clone, Copy)]
enum Phase {
    Running,
    Terminating { since: tokio::time::Instant },
    Killed { since: tokio::time::Instant },
}

/// Clears the terminate handle when a command ends, however it ends.
struct RunningGuard<'a>(&'a Mutex<Option<Arc<Notify>>>);

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

    /// Signals the running command's tree (SIGTERM, SIGKILL after 1 s); its `execute`
    /// resolves with `signal` set. A no-op when nothing runs.
    pub fn terminate(&self) {
        if let Some(notify) = &*self.running.lock().unwrap_or_else(|e| e.into_inner()) {
            notify.notify_one();
        }
    }

    /// Runs `command` under the shell in `cwd`, stdin closed. Commands of one shell run one
    /// after another; a second call waits for the first to end.
    pub async fn execute(
        &self,
        command: &ShellCommand,
        tool_request_id: &str,
        mut on_output: impl FnMut(&OutputLine) + Send,
        on_start: impl FnOnce() + Send,
    ) -> Result<ShellResult> {
        validate_segment("toolRequestId", tool_request_id)?;
        command.validate()?;
        let shown = command.display();
        let _turn = self.turn.lock().await;
        let started_at = Instant::now();
        let notify = Arc::new(Notify::new());
        *self.running.lock().unwrap_or_else(|e| e.into_inner()) = Some(notify.clone());
        let _guard = RunningGuard(&self.running);
        let _use = match &self.usage {
            Some(usage) => usage.begin().await?,
            None => UseGuard::none(),
        };

        let engine = Engine::connect(&self.options.engine).await?;
        let container = self.options.container.as_str();
        let argv = match command {
            ShellCommand::Script(script) => {
                let mut argv = self.program(&engine).await?.clone();
                argv.push(script.clone());
                argv
            }
            ShellCommand::Argv(argv) => argv.clone(),
        };
        let path = log_path(
            &self.options.log_dir,
            &self.options.thread_id,
            tool_request_id,
        );
        let mut log = CommandLog::create(path, &shown).await.ok();
        let request = ExecRequest {
            command: argv,
            working_dir: Some(self.options.cwd.clone()),
            env: self.options.env.clone(),
            user: self.options.user.clone(),
            ..Default::default()
        };
        let mut started = exec::start(&engine, container, &request).await?;
        on_start();
        let tree = TreeRef {
            exec_id: started.exec_id.clone(),
            token: started.token.clone(),
        };

        let what = exec::subject(container, &[shown]);
        let deadline = tokio::time::Instant::from_std(started_at + self.options.timeout);
        let mut decoder = OutputDecoder::new();
        let mut demux = FrameDemux::default();
        let mut output = Vec::new();
        let mut phase = Phase::Running;
        let mut ending = None;
        let mut killed = false;
        let mut stream_error = None;
        loop {
            let frame = match phase {
                Phase::Running => tokio::select! {
                    frame = started.output.next() => frame,
                    _ = notify.notified() => {
                        ending = Some(Ending::Terminated);
                        phase = self.begin_termination(&engine, &tree).await;
                        continue;
                    }
                    _ = sleep_until(deadline) => {
                        ending = Some(Ending::TimedOut);
                        phase = self.begin_termination(&engine, &tree).await;
                        continue;
                    }
                },
                Phase::Terminating { since } => tokio::select! {
                    frame = started.output.next() => frame,
                    _ = sleep_until(since + TERMINATE_GRACE) => {
                        self.signal(&engine, &tree, Signal::Kill).await;
                        killed = true;
                        phase = Phase::Killed { since: tokio::time::Instant::now() };
                        continue;
                    }
                },
                Phase::Killed { since } => tokio::select! {
                    frame = started.output.next() => frame,
                    _ = sleep_until(since + KILL_DRAIN) => break,
                },
            };
            let (kind, bytes) = match frame {
                None => break,
                Some(Ok(frame)) => match demux.split(frame) {
                    Some(split) => split,
                    None => continue,
                },
                Some(Err(err)) => {
                    stream_error = Some(engine.annotate(from_bollard(err, &what)));
                    break;
                }
            };
            let mut lines = Vec::new();
            decoder.push(kind, &bytes, |line| lines.push(line));
            deliver(lines, &mut on_output, &mut log, &mut output).await;
        }
        if let Phase::Terminating { since } = phase {
            killed = self.kill_survivors(&engine, &tree, since).await;
        }
        let mut lines = Vec::new();
        decoder.finish(|line| lines.push(line));
        deliver(lines, &mut on_output, &mut log, &mut output).await;
        if let Some(err) = stream_error {
            if ending.is_none() {
                return Err(err);
            }
        }

        let reported = exec::exit_code(&engine, &started.exec_id, &what).await;
        let signal = match ending {
            Some(Ending::Terminated) => Some(if killed { Signal::Kill } else { Signal::Term }),
            _ => None,
        };
        let exit_code = match (ending, reported) {
            (Some(Ending::TimedOut), Ok(0)) => TIMED_OUT_EXIT,
            (_, Ok(code)) => code,
            (Some(_), Err(_)) => 128 + if killed { 9 } else { 15 },
            (None, Err(err)) => return Err(err),
        };
        if ending == Some(Ending::TimedOut) {
            let line = OutputLine {
                stream: StreamKind::Stderr,
                text: format!(
                    "Command timed out after {} ms and was terminated",
                    self.options.timeout.as_millis()
                ),
            };
            deliver(vec![line], &mut on_output, &mut log, &mut output).await;
        }
        let log_file_path = log
            .as_ref()
            .map(|l| l.path().to_string_lossy().into_owned());
        if let Some(log) = log {
            log.finish(exit_code, signal.map(Signal::node_name)).await;
        }
        Ok(ShellResult {
            exit_code,
            signal: signal.map(Signal::node_name),
            output,
            log_file_path,
            duration_ms: started_at.elapsed().as_millis() as u64,
        })
    }

    async fn begin_termination(&self, engine: &Engine, tree: &TreeRef) -> Phase {
        self.signal(engine, tree, Signal::Term).await;
        Phase::Terminating {
            since: tokio::time::Instant::now(),
        }
    }

    /// Best effort: a failure to signal is retried by the escalation that follows.
    async fn signal(&self, engine: &Engine, tree: &TreeRef, signal: Signal) {
        if let Err(err) = signal_exec_tree(
            engine,
            &self.options.container,
            &tree.exec_id,
            &tree.token,
            signal,
        )
        .await
        {
            tracing::warn!("signalling {} failed: {}", signal.name(), err);
        }
    }

    /// The output closed within the grace period; whatever of the tree is still alive (a
    /// child that closed its output and ignores SIGTERM) gets SIGKILL once the grace period
    /// is over. Returns whether SIGKILL was needed.
    async fn kill_survivors(
        &self,
        engine: &Engine,
        tree: &TreeRef,
        since: tokio::time::Instant,
    ) -> bool {
        let container = &self.options.container;
        let grace_end = since + TERMINATE_GRACE;
        loop {
            match tree_alive(engine, container, &tree.token).await {
                Some(false) => return false,
                Some(true) if tokio::time::Instant::now() < grace_end => {
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                _ => {
                    sleep_until(grace_end).await;
                    self.signal(engine, tree, Signal::Kill).await;
                    return true;
                }
            }
        }
    }

    /// `shell` as given, else `bash -c` where the image has bash, else `/bin/sh -c`.
    async fn program(&self, engine: &Engine) -> Result<&Vec<String>> {
        self.program
            .get_or_try_init(|| async {
                if let Some(shell) = &self.options.shell {
                    return Ok(shell.clone());
                }
                for path in BASH_PATHS {
                    if path_exists(engine, &self.options.container, path).await? {
                        return Ok(vec![path.to_string(), "-c".to_string()]);
                    }
                }
                Ok(vec!["/bin/sh".to_string(), "-c".to_string()])
            })
            .await
    }
}

async fn deliver(
    lines: Vec<OutputLine>,
    on_output: &mut (impl FnMut(&OutputLine) + Send),
    log: &mut Option<CommandLog>,
    output: &mut Vec<OutputLine>,
) {
    if lines.is_empty() {
        return;
    }
    for line in lines {
        on_output(&line);
        if let Some(log) = log.as_mut() {
            log.line(&line).await;
        }
        output.push(line);
    }
    if let Some(log) = log.as_mut() {
        log.flush().await;
    }
}
