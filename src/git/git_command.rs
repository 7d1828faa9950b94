//! One git command in a container, its stdout handed on as it streams and its stderr
//! dropped: through the session agent where it runs, else by an engine exec. A command that
//! outlives its time limit has its whole tree killed inside the container.

use std::sync::Arc;
use std::time::Duration;

use crate::agent::AgentConnection;
use crate::container_runtime::exec_stream::{start_stream, StreamEvent};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::output::StreamKind;
use crate::runtime::exec::{self, ExecRequest};

/// Where and how the commands of one `getState()` run.
pub struct GitRunner<'a> {
    /// `None` where only the agent runs commands (a Pod).
    pub engine: Option<&'a Engine>,
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
    /// The stream of `execStream` carries it, on the agent or the engine alike.
    pub async fn run(&self, command: Vec<String>, mut on_stdout: impl FnMut(&[u8])) -> Result<i64> {
        let request = ExecRequest {
            command,
            ..self.base.clone()
        };
        let what = exec::subject(self.container, &request.command);
        let agent = self.agent.as_ref();
        let (input, mut output) = start_stream(self.engine, self.container, agent, request).await?;
        input.close().await?;
        let collect = async {
            while let Some(event) = output.next().await? {
                match event {
                    StreamEvent::Output(StreamKind::Stdout, data) => on_stdout(&data),
                    StreamEvent::Output(StreamKind::Stderr, _) => {}
                    StreamEvent::Exited { code, .. } => return Ok(code),
                }
            }
            Err(Error::new(
                ErrorCode::EngineError,
                format!("{what}: the output ended without an exit code"),
            ))
        };
        match tokio::time::timeout(self.timeout, collect).await {
            Ok(code) => code,
            Err(_) => {
                input.signal(libc::SIGKILL).await?;
                Err(Error::timeout(format!(
                    "{what} ran past its timeout of {} ms and was killed inside the container",
                    self.timeout.as_millis()
                )))
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
