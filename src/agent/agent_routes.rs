//! Where the reader hands each of the agent's frames: the queue of the request its id
//! names. Handing over never waits, so one request whose consumer is slow or stuck holds
//! up nothing else on the connection. Every queue is bounded by what the agent may send
//! (its request's reply window, granted by the consumer); an agent that sends past that,
//! or floods frames for requests that are not open, breaks the protocol and the caller
//! closes the connection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use container_isolation_agent::protocol::{reply_cost, Message, MAX_FRAME, REPLY_WINDOW};
use tokio::sync::mpsc;

/// What any reply costs a queue at least, so that a flood of small frames is bounded too.
const MIN_COST: u64 = 64;
/// What one request's queue may hold: its window, the frame that overdraws it, slack.
const QUEUE_BOUND: u64 = REPLY_WINDOW as u64 + 2 * MAX_FRAME as u64;
/// Bytes for requests that are no longer open (replies already under way when the host
/// gave up on a request) tolerated within `UNSOLICITED_PERIOD`.
const UNSOLICITED_BOUND: u64 = 64 << 20;
const UNSOLICITED_PERIOD: Duration = Duration::from_secs(10);

/// What a reply occupies in its request's queue until the consumer takes it.
pub fn queued_cost(message: &Message) -> u64 {
    u64::from(reply_cost(message)).max(MIN_COST)
}

struct Route {
    sender: mpsc::UnboundedSender<Message>,
    queued: Arc<AtomicU64>,
}

/// The receiving end of one request's queue.
pub struct RouteEnd {
    pub replies: mpsc::UnboundedReceiver<Message>,
    /// Bytes in the queue, as `queued_cost` counts them; the consumer subtracts.
    pub queued: Arc<AtomicU64>,
}

#[derive(Default)]
pub struct Routes {
    open: Mutex<HashMap<u32, Route>>,
    unsolicited: Mutex<(u64, Option<Instant>)>,
}

impl Routes {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Route>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn open(&self, id: u32) -> RouteEnd {
        let (sender, replies) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicU64::new(0));
        let route = Route {
            sender,
            queued: queued.clone(),
        };
        self.map().insert(id, route);
        RouteEnd { replies, queued }
    }

    pub fn close(&self, id: u32) {
        self.map().remove(&id);
    }

    /// Closes every queue: their consumers see the connection's end.
    pub fn clear(&self) {
        self.map().clear();
    }

    /// How many requests are open.
    pub fn pending(&self) -> usize {
        self.map().len()
    }

    /// Hands `message` to request `id`'s queue; an error says how the agent broke the
    /// protocol.
    pub fn deliver(&self, id: u32, message: Message) -> Result<(), String> {
        let cost = queued_cost(&message);
        let mut open = self.map();
        let Some(route) = open.get(&id) else {
            drop(open);
            return self.unsolicited(cost);
        };
        let queued = route.queued.fetch_add(cost, Ordering::AcqRel) + cost;
        if queued > QUEUE_BOUND {
            open.remove(&id);
            return Err(format!(
                "sent {queued} bytes of replies to request {id} past the {REPLY_WINDOW} it was granted"
            ));
        }
        if route.sender.send(message).is_err() {
            open.remove(&id);
        }
        Ok(())
    }

    fn unsolicited(&self, cost: u64) -> Result<(), String> {
        let mut seen = self.unsolicited.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if seen.1.is_none_or(|since| now - since > UNSOLICITED_PERIOD) {
            *seen = (0, Some(now));
        }
        seen.0 += cost;
        match seen.0 > UNSOLICITED_BOUND {
            true => Err(format!(
                "sent more than {} MiB for requests that were not open within {} s",
                UNSOLICITED_BOUND >> 20,
                UNSOLICITED_PERIOD.as_secs()
            )),
            false => Ok(()),
        }
    }
}
