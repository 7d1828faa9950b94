//! A terminal served by the agent (protocol 4): a command on a pseudo-terminal inside the
//! container, its output as it comes (within the request's reply window: a consumer that
//! stops reading holds the program, never the host's memory), its input sent within
//! `TERMINAL_INPUT_WINDOW` bytes not yet acknowledged (a program that stops reading holds
//! the writer, never the agent's memory), resized and signalled at any time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use container_isolation_agent::protocol::{
    Message, Spawn, RELAY_CHUNK, TERMINAL_INPUT_WINDOW, TERMINAL_VERSION,
};
use tokio::sync::Semaphore;

use super::agent_connection::AgentConnection;
use super::agent_errors::{errno_error, unexpected};
use super::agent_process::{ProcessEvent, ProcessExit};
use super::agent_request::{AgentRequest, RequestSender};
use super::agent_routes::RouteEnd;
use crate::error::{Error, ErrorCode, Result};
use crate::output::StreamKind;

pub struct AgentTerminal {
    request: AgentRequest,
    pub pid: u32,
    what: String,
    control: TerminalControl,
}

/// Writing to, resizing and signalling a terminal from anywhere; cheap to clone.
#[derive(Clone)]
pub struct TerminalControl {
    sender: RequestSender,
    input: Arc<InputWindow>,
}

/// Input bytes the host may still send before the agent acknowledges some.
struct InputWindow {
    room: Semaphore,
    sent: AtomicU64,
}

impl AgentTerminal {
    /// Starts `spawn` on a terminal of `cols` × `rows`; a program that cannot be started
    /// still starts, says why and exits 126, as `AgentProcess::spawn` does.
    pub async fn open(
        connection: &Arc<AgentConnection>,
        spawn: Spawn,
        cols: u16,
        rows: u16,
    ) -> Result<AgentTerminal> {
        if connection.version < TERMINAL_VERSION {
            return Err(Error::new(
                ErrorCode::Unsupported,
                format!(
                    "the session agent in container '{}' speaks protocol {}, from before terminals",
                    connection.container, connection.version
                ),
            ));
        }
        let what = format!(
            "terminal {:?} in container '{}'",
            spawn.argv.join(" "),
            connection.container
        );
        let (acks, route) = connection.open_acks_route()?;
        let input = Arc::new(InputWindow {
            room: Semaphore::new(TERMINAL_INPUT_WINDOW as usize),
            sent: AtomicU64::new(0),
        });
        tokio::spawn(take_acks(route, input.clone(), connection.clone(), acks));
        let message = Message::Terminal {
            spawn,
            cols,
            rows,
            acks,
        };
        let mut request = connection.request(&message).await?;
        let control = TerminalControl {
            sender: request.sender(),
            input,
        };
        match request.recv().await? {
            Message::Spawned { pid } => Ok(AgentTerminal {
                request,
                pid,
                what,
                control,
            }),
            Message::Failed { errno, message } => Err(errno_error(errno, &what, &message)),
            other => Err(unexpected(&what, &other)),
        }
    }

    /// The next piece of output, or the end (`Signalled` answers are skipped). Input
    /// waiting for room fails once the terminal has ended.
    pub async fn next(&mut self) -> Result<ProcessEvent> {
        loop {
            let received = self.request.recv().await;
            if let Some(event) = self.event(received)? {
                return Ok(event);
            }
        }
    }

    /// Output or the end that has already arrived, if any (without waiting).
    pub fn try_next(&mut self) -> Result<Option<ProcessEvent>> {
        while let Some(message) = self.request.try_recv() {
            if let Some(event) = self.event(Ok(message))? {
                return Ok(Some(event));
            }
        }
        Ok(None)
    }

    fn event(&mut self, received: Result<Message>) -> Result<Option<ProcessEvent>> {
        let event = match received {
            Ok(Message::Output { data, .. }) => ProcessEvent::Output(StreamKind::Stdout, data),
            Ok(Message::Exited { code, signal }) => ProcessEvent::Exited(ProcessExit {
                code: i64::from(code),
                signal: (signal > 0).then_some(signal),
            }),
            Ok(Message::Signalled { .. }) => return Ok(None),
            Ok(other) => return Err(unexpected(&self.what, &other)),
            Err(err) => {
                self.control.input.room.close();
                return Err(err);
            }
        };
        if matches!(event, ProcessEvent::Exited(_)) {
            self.control.input.room.close();
        }
        Ok(Some(event))
    }

    pub fn control(&self) -> TerminalControl {
        self.control.clone()
    }
}

/// Hands acknowledged input back to the window; an agent that acknowledges more than was
/// sent breaks the protocol, and the connection is closed.
async fn take_acks(
    mut route: RouteEnd,
    input: Arc<InputWindow>,
    connection: Arc<AgentConnection>,
    id: u32,
) {
    let mut acknowledged = 0u64;
    while let Some(message) = route.replies.recv().await {
        let Message::Credit { bytes } = message else {
            break;
        };
        acknowledged += u64::from(bytes);
        if acknowledged > input.sent.load(Ordering::Acquire) {
            connection.give_up(format!(
                "acknowledged {acknowledged} bytes of terminal input, more than was sent"
            ));
            break;
        }
        input.room.add_permits(bytes as usize);
    }
    input.room.close();
    connection.close_route(id);
}

impl TerminalControl {
    /// Sends `data` to the terminal, waiting while `TERMINAL_INPUT_WINDOW` bytes are
    /// unacknowledged; fails once the terminal has ended.
    pub async fn write(&self, data: &[u8]) -> Result<()> {
        for piece in data.chunks(RELAY_CHUNK) {
            let permits = self
                .input
                .room
                .acquire_many(piece.len() as u32)
                .await
                .map_err(|_| Error::new(ErrorCode::EngineError, "the terminal has ended"))?;
            permits.forget();
            self.input
                .sent
                .fetch_add(piece.len() as u64, Ordering::AcqRel);
            self.sender.send(&Message::Stdin(piece.to_vec())).await?;
        }
        Ok(())
    }

    /// Sets the terminal's size (the program sees `SIGWINCH`).
    pub fn resize(&self, cols: u16, rows: u16) -> Result<()> {
        self.sender.send_now(&Message::Resize { cols, rows })
    }

    /// Sends `signo` to every process of the terminal; SIGKILL stops and kills them all.
    pub fn signal(&self, signo: i32) -> Result<()> {
        match signo {
            libc::SIGKILL => self.sender.send_now(&Message::Kill),
            _ => self.sender.send_now(&Message::Signal { signo }),
        }
    }
}
