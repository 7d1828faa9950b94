//! One running agent: started by one exec, spoken to over that exec's stdin and stdout.
//! A writer task sends frames in order; a reader task splits the agent's stdout into
//! frames and hands each to the request that its id names. Whatever arrives is treated as
//! hostile (anything in the container may write to the agent's stdout): frames are bounded
//! by the protocol, a malformed one closes the connection, and a request's queue is bounded
//! so that the reader waits rather than buffers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use container_isolation_agent::protocol::{encode, Message, CONTROL, VERSION};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

use super::agent_frames::AgentFrames;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::fileio::{container_user, UserIds};
use crate::runtime::exec::{self, ExecRequest};

/// Frames queued towards one request before the reader waits for it.
const REQUEST_QUEUE: usize = 16;
/// Frames queued towards the agent before senders wait.
const SEND_QUEUE: usize = 32;
/// How long a started agent may take to answer `Hello`.
const WELCOME_WAIT: Duration = Duration::from_secs(10);

type Routes = HashMap<u32, mpsc::Sender<Message>>;

pub struct AgentConnection {
    outgoing: mpsc::Sender<Vec<u8>>,
    routes: Arc<Mutex<Routes>>,
    next_id: AtomicU32,
    closed: Arc<AtomicBool>,
    pub container: String,
    /// User specs resolved in this container (its /etc/passwd, read once per spec).
    users: tokio::sync::Mutex<HashMap<Option<String>, UserIds>>,
    /// The agent's path inside the container.
    pub path: String,
    /// The agent's pid inside the container.
    pub pid: u32,
}

/// The replies to one request, in order.
pub struct AgentRequest {
    pub id: u32,
    replies: mpsc::Receiver<Message>,
    connection: Arc<AgentConnection>,
}

impl AgentConnection {
    /// Starts the agent at `path` in `container` (as root: it acts as each caller's user
    /// itself) and waits for its `Welcome`. An error means the agent cannot run there.
    pub async fn start(engine: &Engine, container: &str, path: &str) -> Result<AgentConnection> {
        // As root (it acts as each caller's user itself), in the container's working
        // directory (where a command given none runs), stdin kept open for our frames.
        let request = ExecRequest {
            command: vec![path.to_string(), "serve".to_string()],
            user: Some("0".into()),
            stdin: Some(Vec::new()),
            ..Default::default()
        };
        let started = exec::start_attached(engine, container, &request).await?;
        let (output, mut input) = match started.input {
            Some(input) => (started.output, input),
            None => {
                return Err(Error::new(
                    ErrorCode::EngineError,
                    "the agent's exec has no stdin",
                ))
            }
        };
        let (outgoing, mut queue) = mpsc::channel::<Vec<u8>>(SEND_QUEUE);
        let routes: Arc<Mutex<Routes>> = Arc::default();
        let closed = Arc::new(AtomicBool::new(false));
        let writer = tokio::spawn(async move {
            while let Some(frame) = queue.recv().await {
                if input.write_all(&frame).await.is_err() {
                    break;
                }
            }
            let _ = input.shutdown().await;
        });
        let (welcome_tx, welcome_rx) = mpsc::channel(1);
        routes.lock().unwrap().insert(CONTROL, welcome_tx);
        let frames = AgentFrames::new(output);
        let stderr = frames.stderr.clone();
        tokio::spawn(read_frames(
            frames,
            Ending {
                routes: routes.clone(),
                closed: closed.clone(),
                writer: writer.abort_handle(),
            },
        ));
        let mut connection = AgentConnection {
            outgoing,
            routes,
            next_id: AtomicU32::new(CONTROL + 1),
            closed,
            container: container.to_string(),
            users: Default::default(),
            path: path.to_string(),
            pid: 0,
        };
        connection.pid = connection.handshake(welcome_rx, &stderr).await?;
        Ok(connection)
    }

    async fn handshake(
        &self,
        mut welcome: mpsc::Receiver<Message>,
        stderr: &Mutex<Vec<u8>>,
    ) -> Result<u32> {
        let hello = encode(CONTROL, &Message::Hello { version: VERSION });
        let unavailable = |why: String| {
            let said = String::from_utf8_lossy(&stderr.lock().unwrap())
                .trim()
                .to_string();
            let said = if said.is_empty() {
                String::new()
            } else {
                format!(" ({said})")
            };
            Error::new(
                ErrorCode::EngineError,
                format!(
                    "the session agent at {} in container '{}' {why}{said}",
                    self.path, self.container
                ),
            )
        };
        if self.outgoing.send(hello).await.is_err() {
            return Err(unavailable("did not start".into()));
        }
        match tokio::time::timeout(WELCOME_WAIT, welcome.recv()).await {
            Ok(Some(Message::Welcome { version, pid })) if version == VERSION => {
                self.routes.lock().unwrap().remove(&CONTROL);
                Ok(pid)
            }
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
        self.closed.load(Ordering::Acquire)
    }

    /// Sends `message` as a new request; its replies arrive on the returned handle.
    pub async fn request(self: &Arc<Self>, message: &Message) -> Result<AgentRequest> {
        let id = loop {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            if id != CONTROL {
                break id;
            }
        };
        let (sender, replies) = mpsc::channel(REQUEST_QUEUE);
        self.routes.lock().unwrap().insert(id, sender);
        let request = AgentRequest {
            id,
            replies,
            connection: self.clone(),
        };
        request.send(message).await?;
        Ok(request)
    }

    fn lost(&self) -> Error {
        Error::new(
            ErrorCode::EngineError,
            format!(
                "the session agent in container '{}' is gone (the container stopped, or something in it killed the agent)",
                self.container
            ),
        )
    }
}

impl AgentRequest {
    /// Sends a follow-up frame of this request (stdin, a write's data, a signal).
    pub async fn send(&self, message: &Message) -> Result<()> {
        self.sender().send(message).await
    }

    /// The next reply; an error when the connection is gone.
    pub async fn recv(&mut self) -> Result<Message> {
        self.replies
            .recv()
            .await
            .ok_or_else(|| self.connection.lost())
    }

    /// A reply that has already arrived, if any.
    pub fn try_recv(&mut self) -> Option<Message> {
        self.replies.try_recv().ok()
    }

    /// A handle that sends follow-up frames while another task awaits the replies.
    pub fn sender(&self) -> RequestSender {
        RequestSender {
            id: self.id,
            connection: self.connection.clone(),
        }
    }
}

/// Sends follow-up frames of one request.
#[derive(Clone)]
pub struct RequestSender {
    id: u32,
    connection: Arc<AgentConnection>,
}

impl RequestSender {
    pub async fn send(&self, message: &Message) -> Result<()> {
        self.connection
            .outgoing
            .send(encode(self.id, message))
            .await
            .map_err(|_| self.connection.lost())
    }
}

impl Drop for AgentRequest {
    fn drop(&mut self) {
        self.connection.routes.lock().unwrap().remove(&self.id);
    }
}

/// What the end of the agent's output ends: every request, and the writer (which may be
/// stuck writing to an exec whose process is gone).
struct Ending {
    routes: Arc<Mutex<Routes>>,
    closed: Arc<AtomicBool>,
    writer: tokio::task::AbortHandle,
}

async fn read_frames(mut frames: AgentFrames, ending: Ending) {
    let routes = &ending.routes;
    while let Some(frame) = frames.next().await {
        let Ok((id, message)) = frame else {
            tracing::warn!("session agent: malformed frame; closing the connection");
            break;
        };
        let route = routes.lock().unwrap().get(&id).cloned();
        if let Some(route) = route {
            if route.send(message).await.is_err() {
                routes.lock().unwrap().remove(&id);
            }
        }
    }
    ending.closed.store(true, Ordering::Release);
    ending.writer.abort();
    routes.lock().unwrap().clear();
}
