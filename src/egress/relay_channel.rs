//! The relay's channel to one container: `agent relay` started by an exec of its own (so
//! that a session's network traffic never queues behind its tool calls, nor theirs behind
//! it), its frames read by one task that never waits on a stream, and each stream handed
//! out as a local duplex pipe. What the agent says is hostile: a stream that overruns its
//! window is aborted, a malformed frame ends the channel.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use container_isolation_agent::protocol::{
    encode, version_accepted, Message, AGENT_STREAM, CONTROL, RELAY_WINDOW, VERSION,
};
use tokio::io::{AsyncWriteExt, DuplexStream};
use tokio::sync::{mpsc, oneshot};

use super::relay_pump::{Credit, Inbound, Pump, StreamShared};
use crate::agent::AgentFrames;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::exec::{self, ExecRequest};

/// Frames queued towards the agent before senders wait.
const SEND_QUEUE: usize = 64;
const WELCOME_WAIT: Duration = Duration::from_secs(10);
const DIAL_WAIT: Duration = Duration::from_secs(10);

/// A connection a client in the container made to the relay's listener `listener`.
pub struct Accepted {
    pub listener: u8,
    pub stream: DuplexStream,
}

struct Slot {
    inbound: mpsc::UnboundedSender<Inbound>,
    shared: Arc<StreamShared>,
}

pub struct RelayChannel {
    outgoing: mpsc::Sender<Vec<u8>>,
    slots: Mutex<HashMap<u32, Slot>>,
    dials: Mutex<HashMap<u32, oneshot::Sender<Message>>>,
    next_dial: AtomicU32,
    closed: AtomicBool,
    open_streams: AtomicUsize,
    /// Streams open at once, at most; more are aborted as they arrive.
    pub max_streams: usize,
    pub idle: Duration,
    pub container: String,
}

impl RelayChannel {
    /// Starts `agent relay` at `agent` in `container`, listening on `ports`.
    pub async fn start(
        engine: &Engine,
        container: &str,
        agent: &str,
        ports: &[u16],
        max_streams: usize,
        idle: Duration,
    ) -> Result<(Arc<RelayChannel>, mpsc::UnboundedReceiver<Accepted>)> {
        let mut command = vec![agent.to_string(), "relay".to_string()];
        command.extend(ports.iter().map(u16::to_string));
        let request = ExecRequest {
            command,
            user: Some("0".into()),
            stdin: Some(Vec::new()),
            ..Default::default()
        };
        let started = exec::start_attached(engine, container, &request).await?;
        let Some(mut input) = started.input else {
            return Err(unavailable(container, "its exec has no stdin".into()));
        };
        let (outgoing, mut queue) = mpsc::channel::<Vec<u8>>(SEND_QUEUE);
        tokio::spawn(async move {
            while let Some(frame) = queue.recv().await {
                if input.write_all(&frame).await.is_err() {
                    break;
                }
            }
            let _ = input.shutdown().await;
        });
        let channel = Arc::new(RelayChannel {
            outgoing,
            slots: Mutex::default(),
            dials: Mutex::default(),
            next_dial: AtomicU32::new(CONTROL + 1),
            closed: AtomicBool::new(false),
            open_streams: AtomicUsize::new(0),
            max_streams,
            idle,
            container: container.to_string(),
        });
        let (welcome_tx, welcome_rx) = oneshot::channel();
        channel.dials.lock().unwrap().insert(CONTROL, welcome_tx);
        let (accepted_tx, accepted) = mpsc::unbounded_channel();
        let frames = AgentFrames::new(started.output);
        let stderr = frames.stderr.clone();
        tokio::spawn(read_frames(frames, channel.clone(), accepted_tx));
        channel.handshake(welcome_rx, &stderr).await?;
        Ok((channel, accepted))
    }

    async fn handshake(
        &self,
        welcome: oneshot::Receiver<Message>,
        stderr: &Mutex<Vec<u8>>,
    ) -> Result<()> {
        let hello = encode(CONTROL, &Message::Hello { version: VERSION });
        let _ = self.outgoing.send(hello).await;
        let said = || {
            String::from_utf8_lossy(&stderr.lock().unwrap())
                .trim()
                .to_string()
        };
        match tokio::time::timeout(WELCOME_WAIT, welcome).await {
            Ok(Ok(Message::Welcome { version, .. })) if version_accepted(version) => Ok(()),
            Ok(Ok(other)) => Err(unavailable(&self.container, format!("answered {other:?}"))),
            Ok(Err(_)) => Err(unavailable(&self.container, format!("exited: {}", said()))),
            Err(_) => Err(unavailable(&self.container, "did not answer".into())),
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.open_streams.load(Ordering::Acquire)
    }

    /// A connection to `port` on the container's loopback.
    pub async fn dial(self: &Arc<Self>, port: u16) -> Result<DuplexStream> {
        let what = format!("port {port} in container '{}'", self.container);
        let id = self.next_dial.fetch_add(1, Ordering::Relaxed) & !AGENT_STREAM;
        let pipe = self.open_stream(id).ok_or_else(|| busy(&what))?;
        let (answer_tx, answer) = oneshot::channel();
        self.dials.lock().unwrap().insert(id, answer_tx);
        let answer = match self
            .outgoing
            .send(encode(id, &Message::Dial { port }))
            .await
        {
            Ok(()) => tokio::time::timeout(DIAL_WAIT, answer)
                .await
                .ok()
                .and_then(Result::ok),
            Err(_) => None,
        };
        self.dials.lock().unwrap().remove(&id);
        match answer {
            Some(Message::Done) => Ok(pipe),
            Some(Message::Failed { message, .. }) => {
                self.drop_slot(id);
                Err(Error::new(ErrorCode::Econnrefused, message))
            }
            _ => {
                self.drop_slot(id);
                Err(Error::new(
                    ErrorCode::Timeout,
                    format!("{what}: the relay did not answer"),
                ))
            }
        }
    }

    /// A new stream's slot and pump; its local end, or `None` past `max_streams`.
    fn open_stream(self: &Arc<Self>, id: u32) -> Option<DuplexStream> {
        if self.open_streams.fetch_add(1, Ordering::AcqRel) >= self.max_streams {
            self.open_streams.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        let (local, pipe) = tokio::io::duplex(RELAY_WINDOW as usize);
        let (inbound_tx, inbound) = mpsc::unbounded_channel();
        let shared = Arc::new(StreamShared {
            credit: Credit::new(u64::from(RELAY_WINDOW)),
            pending: AtomicUsize::new(0),
        });
        self.slots.lock().unwrap().insert(
            id,
            Slot {
                inbound: inbound_tx,
                shared: shared.clone(),
            },
        );
        let pump = Pump {
            id,
            pipe,
            inbound,
            shared,
            outgoing: self.outgoing.clone(),
            idle: self.idle,
        };
        let channel = self.clone();
        tokio::spawn(async move {
            pump.run().await;
            channel.drop_slot(id);
        });
        Some(local)
    }

    fn drop_slot(&self, id: u32) {
        if self.slots.lock().unwrap().remove(&id).is_some() {
            self.open_streams.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn abort(&self, id: u32) {
        if let Some(slot) = self.slots.lock().unwrap().get(&id) {
            let _ = slot.inbound.send(Inbound::Abort);
        }
        let _ = self.outgoing.try_send(encode(id, &Message::Abort));
    }

    /// One frame from the agent.
    fn dispatch(
        self: &Arc<Self>,
        id: u32,
        message: Message,
        accepted: &mpsc::UnboundedSender<Accepted>,
    ) {
        match message {
            Message::Accepted { listener } if id & AGENT_STREAM != 0 => {
                match self.open_stream(id) {
                    Some(stream) => {
                        let _ = accepted.send(Accepted { listener, stream });
                    }
                    None => {
                        let _ = self.outgoing.try_send(encode(id, &Message::Abort));
                    }
                }
            }
            Message::Data(data) => {
                let slots = self.slots.lock().unwrap();
                let Some(slot) = slots.get(&id) else { return };
                let pending = slot.shared.pending.fetch_add(data.len(), Ordering::AcqRel);
                if pending + data.len() > RELAY_WINDOW as usize {
                    drop(slots);
                    return self.abort(id);
                }
                let _ = slot.inbound.send(Inbound::Data(data));
            }
            Message::End | Message::Abort => {
                let inbound = match message {
                    Message::End => Inbound::End,
                    _ => Inbound::Abort,
                };
                if let Some(slot) = self.slots.lock().unwrap().get(&id) {
                    let _ = slot.inbound.send(inbound);
                }
            }
            Message::Credit { bytes } => {
                if let Some(slot) = self.slots.lock().unwrap().get(&id) {
                    slot.shared.credit.grant(bytes);
                }
            }
            answer @ (Message::Welcome { .. } | Message::Done | Message::Failed { .. }) => {
                if let Some(waiting) = self.dials.lock().unwrap().remove(&id) {
                    let _ = waiting.send(answer);
                }
            }
            _ => {}
        }
    }
}

fn unavailable(container: &str, why: String) -> Error {
    Error::new(
        ErrorCode::EgressUnavailable,
        format!("the network relay in container '{container}' {why}"),
    )
}

fn busy(what: &str) -> Error {
    Error::new(
        ErrorCode::EgressUnavailable,
        format!("{what}: the session has as many relayed connections open as it may"),
    )
}

async fn read_frames(
    mut frames: AgentFrames,
    channel: Arc<RelayChannel>,
    accepted: mpsc::UnboundedSender<Accepted>,
) {
    while let Some(frame) = frames.next().await {
        let Ok((id, message)) = frame else {
            tracing::warn!("network relay in '{}': malformed frame", channel.container);
            break;
        };
        channel.dispatch(id, message, &accepted);
    }
    channel.closed.store(true, Ordering::Release);
    let slots: Vec<_> = channel.slots.lock().unwrap().drain().collect();
    for (_, slot) in slots {
        let _ = slot.inbound.send(Inbound::Abort);
    }
    channel.dials.lock().unwrap().clear();
}
