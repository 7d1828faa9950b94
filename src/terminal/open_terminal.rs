//! Opening a terminal on a container, through its agent where one runs (and speaks
//! terminals), else through the engine's TTY exec; its input and its output, each usable
//! from its own task. An output dropped before the end kills the terminal's processes.

use std::sync::Arc;

use futures_util::FutureExt;

use super::engine_terminal::{self, EngineInput, EngineOutput};
use super::terminal_request::TerminalRequest;
use crate::agent::{
    connection_user, AgentConnection, AgentTerminal, ProcessEvent, Spawn, TerminalControl,
};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::exec::ExecRequest;

/// Output that has already arrived is handed on together, up to this much: one call to a
/// consumer per piece the terminal gave would cost more than the piece.
const BATCH: usize = 1 << 20;

#[derive(Debug, PartialEq, Eq)]
pub enum TerminalEvent {
    Output(Vec<u8>),
    /// The program ended: its exit code (128 + N for signal N) and that signal, where known.
    Exited {
        code: i64,
        signal: Option<i32>,
    },
}

/// Writing to, resizing and signalling the terminal; cheap to clone.
#[derive(Clone)]
pub enum TerminalInput {
    Agent(TerminalControl),
    Engine(Arc<EngineInput>),
}

enum Output {
    Agent(AgentTerminal),
    Engine(EngineOutput),
}

/// The terminal's output, then its end.
pub struct TerminalOutput {
    output: Output,
    input: TerminalInput,
    /// The end, found while output was gathered, for the next call.
    pending: Option<TerminalEvent>,
    ended: bool,
}

/// Opens `request` on `container`: through `agent` when given (unless it speaks a protocol
/// from before terminals), else through the engine; without one, the agent's refusal.
pub async fn open_terminal(
    engine: Option<&Engine>,
    container: &str,
    agent: Option<&Arc<AgentConnection>>,
    request: &TerminalRequest,
) -> Result<(TerminalInput, TerminalOutput)> {
    let (argv, env) = request.resolved()?;
    let size = (request.cols, request.rows);
    if let Some(connection) = agent {
        let user = connection_user(connection, request.user.as_deref()).await?;
        let spawn = Spawn {
            argv: argv.clone(),
            cwd: request.cwd.clone(),
            replace_env: request.replace_env,
            env: env.clone().into_iter().collect(),
            creds: user.creds(),
            home: user.home.clone(),
            stdin: true,
        };
        match AgentTerminal::open(connection, spawn, size.0, size.1).await {
            Ok(terminal) => {
                let input = TerminalInput::Agent(terminal.control());
                return Ok((
                    input.clone(),
                    TerminalOutput::new(Output::Agent(terminal), input),
                ));
            }
            Err(err) if err.code == ErrorCode::Unsupported && engine.is_some() => {
                tracing::info!("{}; the terminal is the engine's", err.message)
            }
            Err(err) => return Err(err),
        }
    }
    let Some(engine) = engine else {
        return Err(Error::new(
            ErrorCode::Unsupported,
            format!("container '{container}': a terminal needs its session agent or an engine"),
        ));
    };
    let exec = ExecRequest {
        command: argv,
        working_dir: request.cwd.clone(),
        env,
        replace_env: request.replace_env,
        user: request.user.clone(),
        ..Default::default()
    };
    exec.check_command(container)?;
    let (input, output) = engine_terminal::start(engine, container, &exec, size).await?;
    let input = TerminalInput::Engine(Arc::new(input));
    Ok((
        input.clone(),
        TerminalOutput::new(Output::Engine(output), input),
    ))
}

impl TerminalInput {
    /// Sends `data` as typed; waits while the terminal holds too much unread input.
    pub async fn write(&self, data: &[u8]) -> Result<()> {
        match self {
            TerminalInput::Agent(control) => control.write(data).await,
            TerminalInput::Engine(input) => input.write(data).await,
        }
    }

    pub async fn resize(&self, cols: u16, rows: u16) -> Result<()> {
        match self {
            TerminalInput::Agent(control) => control.resize(cols, rows),
            TerminalInput::Engine(input) => input.resize(cols, rows).await,
        }
    }

    /// Sends `signo` to the terminal's processes; SIGKILL kills every one of them.
    pub async fn signal(&self, signo: i32) -> Result<()> {
        match self {
            TerminalInput::Agent(control) => control.signal(signo),
            TerminalInput::Engine(input) => input.signal(signo).await,
        }
    }
}

impl TerminalOutput {
    fn new(output: Output, input: TerminalInput) -> TerminalOutput {
        TerminalOutput {
            output,
            input,
            pending: None,
            ended: false,
        }
    }

    /// The next output (what has arrived, up to `BATCH` bytes together), then the end;
    /// `None` after the end.
    pub async fn next(&mut self) -> Result<Option<TerminalEvent>> {
        if let Some(event) = self.pending.take() {
            return Ok(Some(self.seen(event)));
        }
        if self.ended {
            return Ok(None);
        }
        let Some(event) = self.wait_one().await? else {
            return Ok(None);
        };
        let TerminalEvent::Output(mut data) = event else {
            return Ok(Some(self.seen(event)));
        };
        while data.len() < BATCH {
            match self.ready_one()? {
                Some(TerminalEvent::Output(more)) => data.extend_from_slice(&more),
                Some(end) => {
                    self.pending = Some(end);
                    break;
                }
                None => break,
            }
        }
        Ok(Some(TerminalEvent::Output(data)))
    }

    fn seen(&mut self, event: TerminalEvent) -> TerminalEvent {
        self.ended = matches!(event, TerminalEvent::Exited { .. });
        event
    }

    async fn wait_one(&mut self) -> Result<Option<TerminalEvent>> {
        Ok(Some(match &mut self.output {
            Output::Agent(terminal) => from_process(terminal.next().await?),
            Output::Engine(output) => match output.next().await? {
                Some(event) => from_engine(event),
                None => return Ok(None),
            },
        }))
    }

    /// Output or the end that has already arrived, without waiting.
    fn ready_one(&mut self) -> Result<Option<TerminalEvent>> {
        Ok(match &mut self.output {
            Output::Agent(terminal) => terminal.try_next()?.map(from_process),
            Output::Engine(output) => match output.next().now_or_never() {
                Some(event) => event?.map(from_engine),
                None => None,
            },
        })
    }
}

fn from_process(event: ProcessEvent) -> TerminalEvent {
    match event {
        ProcessEvent::Output(_, data) => TerminalEvent::Output(data),
        ProcessEvent::Exited(exit) => TerminalEvent::Exited {
            code: exit.code,
            signal: exit.signal,
        },
        ProcessEvent::Signalled(_) => TerminalEvent::Output(Vec::new()),
    }
}

fn from_engine(event: std::result::Result<Vec<u8>, i64>) -> TerminalEvent {
    match event {
        Ok(data) => TerminalEvent::Output(data),
        Err(code) => TerminalEvent::Exited { code, signal: None },
    }
}

impl Drop for TerminalOutput {
    fn drop(&mut self) {
        if self.ended || self.pending.is_some() {
            return;
        }
        match &self.input {
            TerminalInput::Agent(control) => {
                let _ = control.signal(libc::SIGKILL);
            }
            TerminalInput::Engine(input) => {
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    let input = input.clone();
                    runtime.spawn(async move { input.signal(libc::SIGKILL).await });
                }
            }
        }
    }
}
