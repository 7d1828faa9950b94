//! One running agent: started by one exec, spoken to over that exec's stdin and stdout, or,
//! where it is offered and taken, over the direct line (`agent_line`) with the exec held
//! open as the agent's lifeline. A writer task (`agent_writer`) sends frames, a reader task
//! (`agent_reading`) hands each arriving frame to its request's queue. Whatever arrives is
//! treated as hostile (anything in the container may write to the agent's stdout, or
//! replace the agent): frames are bounded by the protocol, queues by the reply windows, and
//! a malformed frame, an overrun or an agent that stops answering closes the connection
//! with the reason kept.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use container_isolation_agent::protocol::{
    encode, version_accepted, Message, CONTROL, LINE_VERSION, VERSION,
};
use tokio::sync::{mpsc, oneshot};

use super::agent_channel::AgentChannel;
use super::agent_frames::AgentFrames;
use super::agent_health::{start_watch, Health};
use super::agent_line::{
    negotiate, route_answer, Line, LineFrames, LineOffer, LineRequest, Negotiated,
};
use super::agent_reading::Reading;
use super::agent_routes::{RouteEnd, Routes};
use super::agent_writer::write_frames;
use super::configured_user::ConfiguredUser;
use super::user_ids::UserIds;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::exec::{self, ExecRequest};
use crate::runtime::process_kill::ExecTree;

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
    /// Where the user of a command that names none comes from.
    pub(super) configured_user: ConfiguredUser,
    /// The agent's path inside the container.
    pub path: String,
    /// The agent's pid inside the container.
    pub pid: u32,
    /// The protocol version agreed with the agent.
    pub version: u32,
    /// Which way requests travel.
    pub line: Line,
}

/// What a connection hands its writer and reader once the direct line is up.
struct Handover {
    writer: oneshot::Sender<tokio::net::unix::OwnedWriteHalf>,
    reader: oneshot::Sender<LineFrames>,
}

impl AgentConnection {
    /// Starts the agent at `path` in `container` (as root: it acts as each caller's user
    /// itself) and waits for its `Welcome`; then offers it the direct line, if `line` is an
    /// offer (else it says why there is none). An error means the agent cannot run there.
    pub async fn start(
        engine: &Engine,
        container: &str,
        path: &str,
        line: std::result::Result<LineOffer<'_>, String>,
    ) -> Result<AgentConnection> {
        let (mut connection, handover) = Self::start_exec(engine, container, path).await?;
        let offer = match line {
            Ok(offer) => offer,
            Err(why) => {
                connection.line = Line::Exec(why);
                return Ok(connection.watched());
            }
        };
        match connection.take_line(&offer, handover).await {
            Ok(()) => Ok(connection.watched()),
            Err(why) => {
                // The agent listens elsewhere now: a new one, on the exec stream alone.
                connection.give_up(why.clone());
                tracing::warn!(
                    "container '{container}': {why}; the agent is started again without the line"
                );
                let (mut again, _) = Self::start_exec(engine, container, path).await?;
                again.line = Line::Exec(why);
                Ok(again.watched())
            }
        }
    }

    /// Starts the agent's exec, its writer and reader, and has it say `Welcome`.
    async fn start_exec(
        engine: &Engine,
        container: &str,
        path: &str,
    ) -> Result<(AgentConnection, Handover)> {
        // As root, in the container's working directory (where a command given none runs),
        // stdin kept open for our frames.
        let request = ExecRequest {
            command: vec![path.to_string(), "serve".to_string()],
            user: Some("0".into()),
            stdin: Some(Vec::new()),
            ..Default::default()
        };
        let started = exec::start_attached(engine, container, &request).await?;
        let tree = ExecTree {
            engine: engine.clone(),
            container: container.to_string(),
            exec_id: started.exec_id.clone(),
            token: started.token.clone(),
        };
        let Some(channel) = AgentChannel::from_exec(started, tree) else {
            return Err(Error::new(
                ErrorCode::EngineError,
                "the agent's exec has no stdin",
            ));
        };
        let user = ConfiguredUser::Engine(engine.clone());
        Self::connect(channel, container, path, user).await
    }

    /// The connection to an agent another carrier started on `channel` (a Pod's exec
    /// stream): requests travel over it alone, `no_line` says why.
    pub async fn over(
        channel: AgentChannel,
        container: &str,
        path: &str,
        configured_user: ConfiguredUser,
        no_line: String,
    ) -> Result<AgentConnection> {
        let (mut connection, _) = Self::connect(channel, container, path, configured_user).await?;
        connection.line = Line::Exec(no_line);
        Ok(connection.watched())
    }

    /// Starts the writer and reader on `channel` and has the agent say `Welcome`.
    async fn connect(
        channel: AgentChannel,
        container: &str,
        path: &str,
        configured_user: ConfiguredUser,
    ) -> Result<(AgentConnection, Handover)> {
        let (outgoing, queue) = mpsc::channel::<Vec<u8>>(SEND_QUEUE);
        let (control, urgent) = mpsc::unbounded_channel::<Vec<u8>>();
        let (writer_line, writer_handover) = oneshot::channel();
        let (reader_line, reader_handover) = oneshot::channel();
        let writer = tokio::spawn(write_frames(channel.input, urgent, queue, writer_handover));
        let routes = Arc::new(Routes::default());
        let health = Arc::new(Health::default());
        let welcome = routes.open(CONTROL);
        let frames = AgentFrames::new(channel.output);
        let stderr = frames.stderr.clone();
        let reading = Reading {
            routes: routes.clone(),
            health: health.clone(),
            writer: writer.abort_handle(),
            stop: channel.stop,
            handover: reader_handover,
        };
        tokio::spawn(reading.run(frames));
        let mut connection = AgentConnection {
            outgoing,
            control,
            routes,
            next_id: AtomicU32::new(CONTROL + 1),
            health,
            container: container.to_string(),
            users: Default::default(),
            configured_user,
            path: path.to_string(),
            pid: 0,
            version: 0,
            line: Line::Exec(String::new()),
        };
        let (version, pid) = connection.handshake(welcome, &stderr).await?;
        connection.pid = pid;
        connection.version = version;
        if version < LINE_VERSION {
            connection.line = Line::Exec(format!(
                "the agent speaks protocol {version}, from before the direct line"
            ));
        }
        let handover = Handover {
            writer: writer_line,
            reader: reader_line,
        };
        Ok((connection, handover))
    }

    /// Offers the line; `Ok` whether or not it was taken (`line` says which), `Err` when
    /// the agent took one that is not this host's.
    async fn take_line(
        &mut self,
        offer: &LineOffer<'_>,
        handover: Handover,
    ) -> std::result::Result<(), String> {
        if matches!(&self.line, Line::Exec(why) if !why.is_empty()) {
            return Ok(());
        }
        let (id, mut route) = self.open_route().map_err(|e| e.message)?;
        let request = LineRequest {
            id,
            answer: route_answer(&mut route),
            outgoing: &self.outgoing,
            agent_pid: self.pid,
        };
        let negotiated = negotiate(offer, request).await;
        self.close_route(id);
        match negotiated {
            Negotiated::Direct(stream) => {
                let (read, write) = stream.into_split();
                let handed = handover.writer.send(write).is_ok()
                    && handover.reader.send(LineFrames::new(read)).is_ok();
                self.line = match handed {
                    true => Line::Direct,
                    false => {
                        return Err("the connection ended while the line was handed over".into())
                    }
                };
                Ok(())
            }
            Negotiated::Exec(why) => {
                tracing::info!("container '{}': no direct line: {why}", self.container);
                self.line = Line::Exec(why);
                Ok(())
            }
            Negotiated::Broken(why) => Err(why),
        }
    }

    /// Starts the watchdog (after the start, so that no ping crosses the handover).
    fn watched(self) -> AgentConnection {
        start_watch(&self.health, &self.routes, self.control.clone());
        self
    }

    async fn handshake(
        &self,
        mut welcome: RouteEnd,
        stderr: &Mutex<Vec<u8>>,
    ) -> Result<(u32, u32)> {
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
            Ok(Some(Message::Welcome { version, pid })) if version_accepted(version) => {
                Ok((version, pid))
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

    /// The user ids resolved for this container so far, by user spec (`agent_accounts`).
    pub(super) fn user_cache(&self) -> &tokio::sync::Mutex<HashMap<Option<String>, UserIds>> {
        &self.users
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

    /// Closes the connection without counting it a failure (its container stopped or was
    /// removed through this library): its requests end, its sockets close now.
    pub fn close(&self) {
        self.health.end();
    }

    /// Why requests do not take the direct line; `None` when they do.
    pub fn line_reason(&self) -> Option<String> {
        match &self.line {
            Line::Direct => None,
            Line::Exec(why) => Some(why.clone()),
        }
    }

    /// A new request id and the queue its replies arrive on.
    pub(super) fn open_route(&self) -> Result<(u32, RouteEnd)> {
        let id = self.new_id()?;
        Ok((id, self.routes.open(id)))
    }

    fn new_id(&self) -> Result<u32> {
        if self.is_closed() {
            return Err(self.lost());
        }
        loop {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            if id != CONTROL {
                return Ok(id);
            }
        }
    }

    /// A new id whose route takes a terminal's input acknowledgements (`Routes::open_acks`).
    pub(super) fn open_acks_route(&self) -> Result<(u32, RouteEnd)> {
        let id = self.new_id()?;
        Ok((id, self.routes.open_acks(id)))
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
