//! One running agent: started by one exec, spoken to over that exec's stdin and stdout.
//! A writer task sends frames, control frames (credit, signals, kills, aborts, pings)
//! before queued data, so a stop never waits behind a large write; a reader task splits the
//! agent's stdout into frames and hands each to the queue of the request its id names,
//! without ever waiting for a consumer. Whatever arrives is treated as hostile (anything
//! in the container may write to the agent's stdout, or replace the agent): frames are
//! bounded by the protocol, queues by the reply windows, and a malformed frame, an overrun
//! or an agent that stops answering closes the connection with the reason kept.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use container_isolation_agent::protocol::{encode, Message, CONTROL, VERSION};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::agent_frames::AgentFrames;
use super::agent_health::{start_watch, Health};
use super::agent_routes::{RouteEnd, Routes};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::fileio::{container_user, UserIds};
use crate::runtime::exec::{self, ExecRequest};
use crate::runtime::process_kill::{ExecTree, Signal};

/// Data frames queued towards the agent before senders wait.
const SEND_QUEUE: usize = 32;
/// How long a started agent may take to answer `Hello`.
const WELCOME_WAIT: Duration = Duration::from_secs(5);

pub struct AgentConnection {
    outgoing: mpsc::Sender<Vec<u8>>,
    control: mpsc::UnboundedSender<Vec<u8>>,
    routes: Arc<Routes>,
    next_id: AtomicU32,
    health: Arc<Health>,
    pub container: String,
    /// User specs resolved in this container (its /etc/passwd, read once per spec).
    users: tokio::sync::Mutex<HashMap<Option<String>, UserIds>>,
    /// The agent's path inside the container.
    pub path: String,
    /// The agent's pid inside the container.
    pub pid: u32,
}

impl AgentConnection {
    /// Starts the agent at `path` in `container` (as root: it acts as each caller's user
    /// itself) and waits for its `Welcome`. An error means the agent cannot run there.
    pub async fn start(engine: &Engine, container: &str, path: &str) -> Result<AgentConnection> {
        // As root, in the container's working directory (where a command given none runs),
        // stdin kept open for our frames.
        let request = ExecRequest {
            command: vec![path.to_string(), "serve".to_string()],
            user: Some("0".into()),
            stdin: Some(Vec::new()),
            ..Default::default()
        };
        let mut started = exec::start_attached(engine, container, &request).await?;
        let Some(input) = started.input.take() else {
            return Err(Error::new(
                ErrorCode::EngineError,
                "the agent's exec has no stdin",
            ));
        };
        let (outgoing, queue) = mpsc::channel::<Vec<u8>>(SEND_QUEUE);
        let (control, urgent) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(write_frames(input, urgent, queue));
        let routes = Arc::new(Routes::default());
        let health = Arc::new(Health::default());
        let welcome = routes.open(CONTROL);
        let frames = AgentFrames::new(started.output);
        let stderr = frames.stderr.clone();
        let reading = Reading {
            routes: routes.clone(),
            health: health.clone(),
            writer: writer.abort_handle(),
            exec: ExecTree {
                engine: engine.clone(),
                container: container.to_string(),
                exec_id: started.exec_id.clone(),
                token: started.token.clone(),
            },
        };
        tokio::spawn(reading.run(frames));
        start_watch(&health, &routes, control.clone());
        let mut connection = AgentConnection {
            outgoing,
            control,
            routes,
            next_id: AtomicU32::new(CONTROL + 1),
            health,
            container: container.to_string(),
            users: Default::default(),
            path: path.to_string(),
            pid: 0,
        };
        connection.pid = connection.handshake(welcome, &stderr).await?;
        Ok(connection)
    }

    async fn handshake(&self, mut welcome: RouteEnd, stderr: &Mutex<Vec<u8>>) -> Result<u32> {
        let unavailable = |why: String| {
            let said = String::from_utf8_lossy(&stderr.lock().unwrap_or_else(|e| e.into_inner()))
                .trim()
                .to_string();
            let said = match said.is_empty() {
                true => String::new(),
                false => format!(" ({said})"),
            };
            Error::new(
                ErrorCode::EngineError,
                format!(
                    "the session agent at {} in container '{}' {why}{said}",
                    self.path, self.container
                ),
            )
        };
        let hello = encode(CONTROL, &Message::Hello { version: VERSION });
        if self.outgoing.send(hello).await.is_err() {
            return Err(unavailable("did not start".into()));
        }
        let answer = tokio::time::timeout(WELCOME_WAIT, welcome.replies.recv()).await;
        self.routes.close(CONTROL);
        match answer {
            Ok(Some(Message::Welcome { version, pid })) if version == VERSION => Ok(pid),
            Ok(Some(Message::Welcome { version, .. })) => Err(unavailable(format!(
                "speaks protocol {version}, not {VERSION}"
            ))),
            Ok(Some(other)) => Err(unavailable(format!("answered {other:?}"))),
            Ok(None) => Err(unavailable("exited before answering".into())),
            Err(_) => Err(unavailable(format!(
                "did not answer within {} s",
                WELCOME_WAIT.as_secs()
            ))),
        }
    }

    /// The ids of `spec` (else of the container's configured user) in this container.
    pub async fn user(self: &Arc<Self>, engine: &Engine, spec: Option<&str>) -> Result<UserIds> {
        let key = spec.map(str::to_string);
        let mut users = self.users.lock().await;
        if let Some(found) = users.get(&key) {
            return Ok(found.clone());
        }
        let found = container_user(engine, &self.container, spec, self).await?;
        users.insert(key, found.clone());
        Ok(found)
    }

    pub fn is_closed(&self) -> bool {
        self.health.is_closed()
    }

    /// Why the connection failed (the agent broke the protocol, stopped answering, or
    /// exited with requests open); `None` while it works or after a normal end.
    pub fn failure(&self) -> Option<String> {
        self.health.failure()
    }

    /// Closes the connection: its requests fail with `why`, the agent sees its stdin end.
    pub fn give_up(&self, why: impl Into<String>) {
        self.health.fail(why);
    }

    /// A new request id and the queue its replies arrive on.
    pub(super) fn open_route(&self) -> Result<(u32, RouteEnd)> {
        if self.is_closed() {
            return Err(self.lost());
        }
        let id = loop {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            if id != CONTROL {
                break id;
            }
        };
        Ok((id, self.routes.open(id)))
    }

    /// Queues a data frame (waits while the queue towards the agent is full).
    pub(super) async fn send_frame(&self, frame: Vec<u8>) -> Result<()> {
        self.outgoing.send(frame).await.map_err(|_| self.lost())
    }

    /// Sends a control frame ahead of queued data, without waiting.
    pub(super) fn send_control(&self, frame: Vec<u8>) -> Result<()> {
        self.control.send(frame).map_err(|_| self.lost())
    }

    pub(super) fn close_route(&self, id: u32) {
        self.routes.close(id);
    }

    pub(super) fn lost(&self) -> Error {
        let why = self.health.failure().unwrap_or_else(|| {
            "is gone (the container stopped, or something in it killed the agent)".into()
        });
        Error::new(
            ErrorCode::EngineError,
            format!("the session agent in container '{}' {why}", self.container),
        )
    }
}

/// Writes control frames first, then data frames, until both senders are gone.
async fn write_frames(
    mut input: std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>,
    mut urgent: mpsc::UnboundedReceiver<Vec<u8>>,
    mut queue: mpsc::Receiver<Vec<u8>>,
) {
    loop {
        let frame = tokio::select! {
            biased;
            Some(frame) = urgent.recv() => frame,
            Some(frame) = queue.recv() => frame,
            else => break,
        };
        if input.write_all(&frame).await.is_err() {
            break;
        }
    }
    let _ = input.shutdown().await;
}

/// The reader of one connection, and what its end ends: every request, the writer (which
/// may be stuck writing to an exec whose process is gone) and, when the agent failed, the
/// agent's exec (a replaced agent need not stop when its stdin ends, and what it writes
/// costs the engine's time).
struct Reading {
    routes: Arc<Routes>,
    health: Arc<Health>,
    writer: tokio::task::AbortHandle,
    exec: ExecTree,
}

impl Reading {
    async fn run(self, mut frames: AgentFrames) {
        loop {
            let frame = tokio::select! {
                frame = frames.next() => frame,
                _ = self.health.given_up() => break,
            };
            let Some(frame) = frame else {
                let open = self.routes.pending();
                if open > 0 {
                    self.health
                        .fail(format!("exited with {open} requests open"));
                }
                break;
            };
            let (id, message) = match frame {
                Ok(frame) => frame,
                Err(e) => {
                    self.health.fail(format!("broke the protocol ({e})"));
                    break;
                }
            };
            if id == CONTROL && matches!(message, Message::Pong) {
                self.health.answered();
                continue;
            }
            if let Err(why) = self.routes.deliver(id, message) {
                self.health.fail(format!("broke the protocol: it {why}"));
                break;
            }
        }
        self.health.mark_closed();
        self.writer.abort();
        self.routes.clear();
        if let Some(why) = self.health.failure() {
            tracing::warn!("session agent: {why}; closing the connection");
            self.exec.signal_in_background(Signal::Kill);
        }
    }
}
