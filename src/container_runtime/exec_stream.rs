//! A long-lived, bidirectional, killable exec (Lace's `execStream`): stdin written as the
//! host wishes, stdout and stderr as they come, a signal to the whole tree, and the exit.
//! Through the session agent where it runs (the tree is the reaper's, exact); else an
//! attached engine exec, whose tree is found by its token.

use std::sync::Arc;

use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;
use tokio::sync::Mutex;

use crate::agent::{spawn_for, AgentConnection, AgentProcess, ProcessControl, ProcessEvent};
use crate::engine::{from_bollard, Engine, FrameDemux};
use crate::error::{Error, ErrorCode, Result};
use crate::output::StreamKind;
use crate::runtime::exec::{self, ExecRequest, StartedExec};
use crate::runtime::process_kill::{ExecTree, Signal};

/// How long `signal` waits for an engine exec's signal before it resolves anyway.
const SIGNAL_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

pub enum StreamEvent {
    Output(StreamKind, Vec<u8>),
    /// The command ended: its exit code (128 + N for signal N) and that signal.
    Exited {
        code: i64,
        signal: Option<i32>,
    },
}

/// Writing to and signalling the command; cheap to clone.
#[derive(Clone)]
pub enum StreamInput {
    Agent(ProcessControl),
    Engine(Arc<EngineInput>),
}

pub struct EngineInput {
    tree: ExecTree,
    stdin: Mutex<Option<std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>>>,
}

/// The command's output and end, in order.
pub enum StreamOutput {
    Agent(AgentProcess),
    Engine {
        started: StartedExec,
        demux: FrameDemux,
        engine: Engine,
        what: String,
        ended: bool,
    },
}

/// Starts `request` (its `stdin` field is ignored: stdin stays open for `write`).
pub async fn start_stream(
    engine: Option<&Engine>,
    container: &str,
    agent: Option<&Arc<AgentConnection>>,
    mut request: ExecRequest,
) -> Result<(StreamInput, StreamOutput)> {
    request.check_command(container)?;
    if let Some(connection) = agent {
        request.stdin = Some(Vec::new());
        let spawn = spawn_for(connection, &request).await?;
        let process = AgentProcess::spawn(connection, spawn).await?;
        return Ok((
            StreamInput::Agent(process.control()),
            StreamOutput::Agent(process),
        ));
    }
    let Some(engine) = engine else {
        return Err(Error::new(
            ErrorCode::Unsupported,
            format!(
                "{}: no session agent serves this container and there is no engine exec to fall back on",
                exec::subject(container, &request.command)
            ),
        ));
    };
    request.stdin = Some(Vec::new());
    let mut started = exec::start_attached(engine, container, &request).await?;
    let input = EngineInput {
        tree: ExecTree {
            engine: engine.clone(),
            container: container.to_string(),
            exec_id: started.exec_id.clone(),
            token: started.token.clone(),
        },
        stdin: Mutex::new(started.input.take()),
    };
    Ok((
        StreamInput::Engine(Arc::new(input)),
        StreamOutput::Engine {
            what: exec::subject(container, &request.command),
            started,
            demux: FrameDemux::default(),
            engine: engine.clone(),
            ended: false,
        },
    ))
}

impl StreamInput {
    pub async fn write(&self, data: &[u8]) -> Result<()> {
        match self {
            StreamInput::Agent(control) => control.write_stdin(data).await,
            StreamInput::Engine(input) => match input.stdin.lock().await.as_mut() {
                Some(stdin) => stdin.write_all(data).await.map_err(|e| {
                    Error::new(crate::error::ErrorCode::EngineError, format!("stdin: {e}"))
                }),
                None => Ok(()),
            },
        }
    }

    pub async fn close(&self) -> Result<()> {
        match self {
            StreamInput::Agent(control) => control.close_stdin().await,
            StreamInput::Engine(input) => {
                if let Some(mut stdin) = input.stdin.lock().await.take() {
                    let _ = stdin.shutdown().await;
                }
                Ok(())
            }
        }
    }

    /// Sends `signo` to every process of the command; SIGKILL stops and kills them all.
    pub async fn signal(&self, signo: i32) -> Result<()> {
        match self {
            StreamInput::Agent(control) if signo == libc::SIGKILL => control.kill(),
            StreamInput::Agent(control) => control.signal(signo),
            StreamInput::Engine(input) => {
                let signal = if signo == libc::SIGKILL {
                    Signal::Kill
                } else {
                    Signal::Term
                };
                // Bounded whatever the engine does; a slow signal goes on in the background.
                let sent = input.tree.clone().signal_in_background(signal);
                match tokio::time::timeout(SIGNAL_WAIT, sent).await {
                    Ok(Ok(Some(result))) => result,
                    _ => Ok(()),
                }
            }
        }
    }
}

impl StreamOutput {
    /// The next output, then the end; `None` after the end.
    pub async fn next(&mut self) -> Result<Option<StreamEvent>> {
        match self {
            StreamOutput::Agent(process) => loop {
                match process.next().await {
                    Ok(ProcessEvent::Output(kind, data)) => {
                        return Ok(Some(StreamEvent::Output(kind, data)))
                    }
                    Ok(ProcessEvent::Exited(exit)) => {
                        return Ok(Some(StreamEvent::Exited {
                            code: exit.code,
                            signal: exit.signal,
                        }))
                    }
                    Ok(ProcessEvent::Signalled(_)) => continue,
                    // After the end, the request's channel closes with the connection.
                    Err(err) => return Err(err),
                }
            },
            StreamOutput::Engine {
                started,
                demux,
                engine,
                what,
                ended,
            } => {
                if *ended {
                    return Ok(None);
                }
                while let Some(frame) = started.output.next().await {
                    let frame = frame.map_err(|e| engine.annotate(from_bollard(e, what)))?;
                    if let Some((kind, bytes)) = demux.split(frame) {
                        return Ok(Some(StreamEvent::Output(kind, bytes.to_vec())));
                    }
                }
                *ended = true;
                let code = exec::exit_code(engine, &started.exec_id, what).await?;
                // The engine does not say whether a signal ended the command.
                Ok(Some(StreamEvent::Exited { code, signal: None }))
            }
        }
    }
}

/// `execStream` on a runtime: through the container's agent unless the runtime says not.
pub async fn open_stream(
    runtime: &super::DockerRuntime,
    container: &str,
    request: ExecRequest,
) -> Result<(StreamInput, StreamOutput)> {
    let engine = runtime.engine().await?;
    let agent = crate::agent::agent_if(runtime.uses_agent(), &engine, container).await?;
    start_stream(Some(&engine), container, agent.as_ref(), request).await
}
