//! The relay's channel to one container: `agent relay` started by an exec of its own (so
//! that a session's network traffic never queues behind its tool calls, nor theirs behind
//! it), its frames read by one task that never waits on a stream, and each stream handed
//! out as a `RelayStream`. Where the container has the direct line, the relay is
//! offered it after its `Welcome` (`crate::agent::offer_line`: the agent's listener and
//! checks) and its frames then travel over that socket (`relay_transport`); anything off
//! keeps the exec stream, with the reason kept (`line`). What the agent says is hostile: a
//! stream that overruns its window is aborted, a malformed frame ends the channel. How a
//! relay starts is `relay_start`'s.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use container_isolation_agent::protocol::{encode, Message, AGENT_STREAM, CONTROL};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use super::relay_line::{Switch, Welcomed};
use super::relay_stream::{Inbound, RelayStream, StreamParts, StreamShared};
use crate::agent::{AgentStop, Line};
use crate::error::{Error, ErrorCode, Result};

/// Frames queued towards the agent before senders wait.
const SEND_QUEUE: usize = 64;
const WELCOME_WAIT: Duration = Duration::from_secs(10);
const DIAL_WAIT: Duration = Duration::from_secs(10);

/// A connection a client in the container made to the relay's listener `listener`.
pub struct Accepted {
    pub listener: u8,
    pub stream: RelayStream,
}

pub(super) struct Slot {
    pub(super) inbound: mpsc::UnboundedSender<Inbound>,
    pub(super) shared: Arc<StreamShared>,
}

/// A started relay: its channel, the connections accepted in the container, its switch to
/// the line, and its `Welcome` (protocol version, pid).
type Started = (
    Arc<RelayChannel>,
    mpsc::UnboundedReceiver<Accepted>,
    Switch,
    Welcomed,
);

pub struct RelayChannel {
    pub(super) outgoing: mpsc::Sender<Vec<u8>>,
    /// Which way the frames travel.
    line: Mutex<Line>,
    /// The writer and reader tasks.
    tasks: Mutex<Vec<AbortHandle>>,
    /// Ends the relay's carrier (a Pod's exec stream) when the channel closes.
    stop: Mutex<Option<AgentStop>>,
    /// The streams open, by id: as many as `max_streams`.
    pub(super) slots: Mutex<HashMap<u32, Slot>>,
    pub(super) dials: Mutex<HashMap<u32, oneshot::Sender<Message>>>,
    next_dial: AtomicU32,
    closed: AtomicBool,
    /// Streams open at once, at most; more are aborted as they arrive.
    pub max_streams: usize,
    pub idle: Duration,
    /// The container's name, as messages give it (a claimed pool member's changes).
    container: Mutex<String>,
}

impl RelayChannel {
    /// A channel whose frames to the agent go to `outgoing`, with no task yet.
    fn new(
        outgoing: mpsc::Sender<Vec<u8>>,
        container: &str,
        (max_streams, idle): (usize, Duration),
    ) -> RelayChannel {
        RelayChannel {
            outgoing,
            line: Mutex::new(Line::Exec(String::new())),
            tasks: Mutex::default(),
            stop: Mutex::default(),
            slots: Mutex::default(),
            dials: Mutex::default(),
            next_dial: AtomicU32::new(CONTROL + 1),
            closed: AtomicBool::new(false),
            max_streams,
            idle,
            container: Mutex::new(container.to_string()),
        }
    }

    /// The container's name, as messages give it.
    pub fn container(&self) -> String {
        self.container
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The container now goes by `name` (a warm pool member claimed by a session).
    pub fn rename(&self, name: &str) {
        *self.container.lock().unwrap_or_else(|e| e.into_inner()) = name.to_string();
    }

    /// Which way the relay's frames travel.
    pub fn line(&self) -> Line {
        self.line.lock().unwrap().clone()
    }

    /// Ends the channel now: its streams are aborted, the relay sees its stdin end.
    pub fn close(&self) {
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
        if let Some(stop) = self.stop.lock().unwrap().take() {
            stop();
        }
        self.closed.store(true, Ordering::Release);
        let slots: Vec<_> = self.slots.lock().unwrap().drain().collect();
        for (_, slot) in slots {
            let _ = slot.inbound.send(Inbound::Abort);
            slot.shared.abort();
        }
        self.dials.lock().unwrap().clear();
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.slots.lock().unwrap().len()
    }

    /// Whether `id` names a stream open now.
    pub(super) fn is_open(&self, id: u32) -> bool {
        self.slots.lock().unwrap().contains_key(&id)
    }

    /// A connection to `port` on the container's loopback.
    pub async fn dial(self: &Arc<Self>, port: u16) -> Result<RelayStream> {
        let what = format!("port {port} in container '{}'", self.container());
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
                Err(Error::new(ErrorCode::Econnrefused, message))
            }
            _ => Err(Error::new(
                ErrorCode::Timeout,
                format!("{what}: the relay did not answer"),
            )),
        }
    }

    /// A new stream's slot and the stream itself; `None` past `max_streams`, or when `id`
    /// names a stream open now (its slot is never replaced).
    pub(super) fn open_stream(self: &Arc<Self>, id: u32) -> Option<RelayStream> {
        let mut slots = self.slots.lock().unwrap();
        if slots.len() >= self.max_streams || slots.contains_key(&id) {
            return None;
        }
        let (inbound_tx, inbound) = mpsc::unbounded_channel();
        let shared = Arc::new(StreamShared::new());
        let slot = Slot {
            inbound: inbound_tx,
            shared: shared.clone(),
        };
        slots.insert(id, slot);
        drop(slots);
        let channel = Arc::downgrade(self);
        Some(RelayStream::new(StreamParts {
            id,
            inbound,
            shared,
            outgoing: self.outgoing.clone(),
            idle: self.idle,
            forget: Box::new(move || {
                if let Some(channel) = channel.upgrade() {
                    channel.drop_slot(id);
                }
            }),
        }))
    }

    fn drop_slot(&self, id: u32) {
        self.slots.lock().unwrap().remove(&id);
    }

    pub(super) fn abort(&self, id: u32) {
        if let Some(slot) = self.slots.lock().unwrap().get(&id) {
            let _ = slot.inbound.send(Inbound::Abort);
            slot.shared.abort();
        }
        let _ = self.outgoing.try_send(encode(id, &Message::Abort));
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

#[path = "relay_start.rs"]
mod start;

#[cfg(test)]
#[path = "relay_channel_tests.rs"]
mod tests;
