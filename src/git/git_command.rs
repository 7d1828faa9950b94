//! One git command in a container, its stdout handed on as it streams and its stderr
//! dropped: through the session agent where it runs, else by an engine exec. A command that
//! outlives its time limit has its whole tree killed inside the container.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;

use crate::agent::{spawn_for, AgentConnection, AgentProcess, ProcessEvent};
use crate::engine::{from_bollard, Engine, FrameDemux};
use crate::error::{Error, Result};
use crate::output::StreamKind;
use crate::runtime::exec::{self, ExecRequest};
use crate::runtime::process_kill::{signal_exec_tree, Signal};

/// Where and how the commands of one `getState()` run.
pub struct GitRunner<'a> {
    pub engine: &'a Engine,
    pub container: &'a str,
    pub agent: Option<Arc<AgentConnection>>,
    /// Its command is replaced by each call's; the rest (cwd, user, env) is kept.
    pub base: ExecRequest,
    pub timeout: Duration,
}

/// Keeps at most `limit` bytes of what is pushed; the rest is read and dropped.
pub struct Capture {
    pub bytes: Vec<u8>,
    limit: usize,
}

impl Capture {
    pub fn new(limit: usize) -> Capture {
        Capture {
            bytes: Vec::new(),
            limit,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        let room = self.limit.saturating_sub(self.bytes.len());
        self.bytes
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

impl GitRunner<'_> {
    /// Runs `command` to its end and returns its exit code; a non-zero exit is a result.
    pub async fn run(&self, command: Vec<String>, on_stdout: impl FnMut(&[u8])) -> Result<i64> {
        let request = ExecRequest {
            command,
            ..self.base.clone()
        };
        let what = exec::subject(self.container, &request.command);
        let code = match &self.agent {
            Some(connection) => self.on_agent(connection, request, on_stdout).await,
            None => self.on_engine(request, on_stdout).await,
        };
        code?.ok_or_else(|| {
            Error::timeout(format!(
                "{what} ran past its timeout of {} ms and was killed inside the container",
                self.timeout.as_millis()
            ))
        })
    }

    /// The exit code, or `None` when the command was killed for running too long.
    async fn on_agent(
        &self,
        connection: &Arc<AgentConnection>,
        request: ExecRequest,
        mut on_stdout: impl FnMut(&[u8]),
    ) -> Result<Option<i64>> {
        let spawn = spawn_for(self.engine, connection, &request).await?;
        let mut process = AgentProcess::spawn(connection, spawn).await?;
        let control = process.control();
        let collect = async {
            loop {
                match process.next().await? {
                    ProcessEvent::Output(StreamKind::Stdout, data) => on_stdout(&data),
                    ProcessEvent::Exited(exit) => return Ok::<i64, Error>(exit.code),
                    ProcessEvent::Output(StreamKind::Stderr, _) | ProcessEvent::Signalled(_) => {}
                }
            }
        };
        match tokio::time::timeout(self.timeout, collect).await {
            Ok(code) => code.map(Some),
            Err(_) => {
                control.kill().await?;
                Ok(None)
            }
        }
    }

    async fn on_engine(
        &self,
        request: ExecRequest,
        mut on_stdout: impl FnMut(&[u8]),
    ) -> Result<Option<i64>> {
        let (engine, container) = (self.engine, self.container);
        let what = exec::subject(container, &request.command);
        let mut started = exec::start(engine, container, &request).await?;
        let drain = async {
            let mut demux = FrameDemux::default();
            while let Some(frame) = started.output.next().await {
                let frame = frame.map_err(|e| engine.annotate(from_bollard(e, &what)))?;
                if let Some((StreamKind::Stdout, bytes)) = demux.split(frame) {
                    on_stdout(&bytes);
                }
            }
            Ok::<(), Error>(())
        };
        match tokio::time::timeout(self.timeout, drain).await {
            Ok(drained) => {
                drained?;
                exec::exit_code(engine, &started.exec_id, &what)
                    .await
                    .map(Some)
            }
            Err(_) => {
                let (exec_id, token) = (&started.exec_id, &started.token);
                signal_exec_tree(engine, container, exec_id, token, Signal::Kill).await?;
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Capture;

    #[test]
    fn capture_keeps_the_first_bytes_up_to_its_limit() {
        let mut capture = Capture::new(5);
        capture.push(b"abc");
        capture.push(b"defgh");
        capture.push(b"ij");
        assert_eq!(capture.bytes, b"abcde");
    }
}
