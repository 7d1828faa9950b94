//! A command run by the agent: spawned under its own reaper (a child subreaper and session
//! leader, so nothing the command starts can leave its tree), its output as it comes, and
//! its end as an exit code and, when a signal ended it, that signal.

use std::sync::Arc;

use container_isolation_agent::protocol::{Message, Spawn, CHUNK};

use super::agent_connection::AgentConnection;
use super::agent_errors::{errno_error, unexpected};
use super::agent_request::{AgentRequest, RequestSender};
use crate::error::Result;
use crate::output::StreamKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessExit {
    /// The exit status, or 128 + N for signal N (as a shell reports it).
    pub code: i64,
    pub signal: Option<i32>,
}

#[derive(Debug)]
pub enum ProcessEvent {
    Output(StreamKind, Vec<u8>),
    Exited(ProcessExit),
    /// How many processes a `signal` or `kill` reached.
    Signalled(u32),
}

pub struct AgentProcess {
    request: AgentRequest,
    pub pid: u32,
    what: String,
}

/// What may be done to a running command from anywhere: signal it, feed its stdin.
#[derive(Clone)]
pub struct ProcessControl(RequestSender);

impl AgentProcess {
    /// Starts `spawn`; a command that cannot be started (no such program) still starts,
    /// reports why on stderr and exits 126, as an engine exec does.
    pub async fn spawn(connection: &Arc<AgentConnection>, spawn: Spawn) -> Result<AgentProcess> {
        let what = format!(
            "exec {:?} in container '{}'",
            spawn.argv.join(" "),
            connection.container
        );
        let mut request = connection.request(&Message::Spawn(spawn)).await?;
        match request.recv().await? {
            Message::Spawned { pid } => Ok(AgentProcess { request, pid, what }),
            Message::Failed { errno, message } => Err(errno_error(errno, &what, &message)),
            other => Err(unexpected(&what, &other)),
        }
    }

    /// The next piece of output, the end, or the answer to a signal.
    pub async fn next(&mut self) -> Result<ProcessEvent> {
        Ok(match self.request.recv().await? {
            Message::Output { stderr: true, data } => {
                ProcessEvent::Output(StreamKind::Stderr, data)
            }
            Message::Output { data, .. } => ProcessEvent::Output(StreamKind::Stdout, data),
            Message::Exited { code, signal } => ProcessEvent::Exited(ProcessExit {
                code: code as i64,
                signal: (signal > 0).then_some(signal),
            }),
            Message::Signalled { count } => ProcessEvent::Signalled(count),
            other => return Err(unexpected(&self.what, &other)),
        })
    }

    pub fn control(&self) -> ProcessControl {
        ProcessControl(self.request.sender())
    }
}

impl ProcessControl {
    /// Sends `signo` to every process of the command's tree (ahead of queued stdin,
    /// without waiting).
    pub fn signal(&self, signo: i32) -> Result<()> {
        self.0.send_now(&Message::Signal { signo })
    }

    /// Stops and kills every process of the tree, until none is left (ahead of queued
    /// stdin, without waiting).
    pub fn kill(&self) -> Result<()> {
        self.0.send_now(&Message::Kill)
    }

    pub async fn write_stdin(&self, data: &[u8]) -> Result<()> {
        for piece in data.chunks(CHUNK) {
            self.0.send(&Message::Stdin(piece.to_vec())).await?;
        }
        Ok(())
    }

    pub async fn close_stdin(&self) -> Result<()> {
        self.0.send(&Message::StdinEnd).await
    }
}
