//! Where the reader hands each of the agent's frames: the queue of the request its id
//! names. Handing over never waits, so one request whose consumer is slow or stuck holds
//! up nothing else on the connection. Every queue is bounded by what the agent may send
//! (its request's reply window, granted by the consumer). A request the host gave up on
//! may still get what was under way (`LATE_BUDGET` bytes of it); anything past that, any
//! data for a request closed long ago, and any frame for a request never made breaks the
//! protocol, and the caller closes the connection.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use container_isolation_agent::protocol::{reply_cost, Message, MAX_FRAME, REPLY_WINDOW};
use tokio::sync::mpsc;

/// What any late reply costs at least, so that a flood of small frames is bounded too.
const MIN_COST: u64 = 64;
/// How far the agent may send past what it was granted (the frame that overdraws).
const OVERDRAW: u64 = 2 * MAX_FRAME as u64;
/// Replies without data one request may get (a command's `Spawned`, `Signalled` for each
/// signal sent, `Exited`...): a flood of them ends the connection too.
const FREE_REPLIES: u32 = 4096;
/// What a closed request may still get: its window and the frames queued in the agent
/// (32 of at most a frame each) when the host gave up on it.
const LATE_BUDGET: u64 = REPLY_WINDOW as u64 + OVERDRAW + 32 * MAX_FRAME as u64;
/// Closed requests whose late replies are still counted; older ones may get only replies
/// that carry no data (a command's `Exited` long after its output was abandoned).
const LATE_KEPT: usize = 1024;

/// What a late reply costs against its closed request's budget.
fn late_cost(message: &Message) -> u64 {
    u64::from(reply_cost(message)).max(MIN_COST)
}

struct Route {
    sender: mpsc::UnboundedSender<Message>,
    granted: Arc<AtomicU64>,
    /// Reply bytes (`reply_cost`) received so far, and replies without data.
    received: u64,
    free: u32,
    /// A terminal's input acknowledgements: only `Credit`, never counted as replies (its
    /// consumer drains it at once and checks each against what it sent).
    acks: bool,
}

impl Route {
    /// Counts `message` against what the request was granted.
    fn count(&mut self, id: u32, message: &Message) -> Result<(), String> {
        if self.acks {
            return match message {
                Message::Credit { .. } => Ok(()),
                other => Err(format!("sent {other:?} as an acknowledgement ({id})")),
            };
        }
        let cost = u64::from(reply_cost(message));
        if cost == 0 {
            self.free += 1;
            return match self.free > FREE_REPLIES {
                true => Err(format!(
                    "sent more than {FREE_REPLIES} replies to request {id}"
                )),
                false => Ok(()),
            };
        }
        self.received += cost;
        let granted = self.granted.load(Ordering::Acquire);
        match self.received > granted + OVERDRAW {
            true => Err(format!(
                "sent {} bytes of replies to request {id}, past the {granted} it was granted",
                self.received
            )),
            false => Ok(()),
        }
    }
}

/// The receiving end of one request's queue.
pub struct RouteEnd {
    pub replies: mpsc::UnboundedReceiver<Message>,
    /// Reply bytes granted to the agent so far (its window, then each `Credit`); the
    /// consumer adds what it grants.
    pub granted: Arc<AtomicU64>,
}

#[derive(Default)]
pub struct Routes {
    open: Mutex<HashMap<u32, Route>>,
    late: Mutex<Late>,
}

/// What closed requests may still get.
#[derive(Default)]
struct Late {
    /// The highest request id opened so far.
    highest: u32,
    budgets: HashMap<u32, u64>,
    order: VecDeque<u32>,
}

impl Late {
    fn closed(&mut self, id: u32) {
        if self.budgets.insert(id, LATE_BUDGET).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > LATE_KEPT {
            if let Some(old) = self.order.pop_front() {
                self.budgets.remove(&old);
            }
        }
    }

    fn spend(&mut self, id: u32, message: &Message) -> Result<(), String> {
        if id > self.highest {
            return Err(format!("answered request {id}, which was never made"));
        }
        let cost = late_cost(message);
        match self.budgets.get_mut(&id) {
            Some(left) if *left >= cost => {
                *left -= cost;
                Ok(())
            }
            Some(_) => Err(format!(
                "sent more than {LATE_BUDGET} bytes to request {id} after it was closed"
            )),
            None if reply_cost(message) == 0 => Ok(()),
            None => Err(format!("sent data to request {id}, closed long before")),
        }
    }
}

impl Routes {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Route>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn open(&self, id: u32) -> RouteEnd {
        self.open_kind(id, false)
    }

    /// Opens the route a terminal's input acknowledgements arrive on.
    pub fn open_acks(&self, id: u32) -> RouteEnd {
        self.open_kind(id, true)
    }

    fn open_kind(&self, id: u32, acks: bool) -> RouteEnd {
        let (sender, replies) = mpsc::unbounded_channel();
        let granted = Arc::new(AtomicU64::new(u64::from(REPLY_WINDOW)));
        let route = Route {
            sender,
            granted: granted.clone(),
            received: 0,
            free: 0,
            acks,
        };
        self.map().insert(id, route);
        let mut late = self.late();
        late.highest = late.highest.max(id);
        RouteEnd { replies, granted }
    }

    fn late(&self) -> std::sync::MutexGuard<'_, Late> {
        self.late.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn close(&self, id: u32) {
        if self.map().remove(&id).is_some() {
            self.late().closed(id);
        }
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
        let mut open = self.map();
        let Some(route) = open.get_mut(&id) else {
            drop(open);
            return self.late().spend(id, &message);
        };
        if let Err(why) = route.count(id, &message) {
            open.remove(&id);
            return Err(why);
        }
        if route.sender.send(message).is_err() {
            open.remove(&id);
            drop(open);
            self.late().closed(id);
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "agent_routes_tests.rs"]
mod tests;
