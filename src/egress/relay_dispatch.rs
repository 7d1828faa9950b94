//! One frame from the relay, put where it belongs: a connection accepted in the container
//! becomes a stream (one past the budget is aborted; one under an id already open aborts
//! that stream and opens nothing), a stream's data, end, abort or credit goes to its stream
//! (data past the window aborts the stream), an answer to the one waiting for it.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use container_isolation_agent::protocol::{encode, Message, AGENT_STREAM, RELAY_WINDOW};
use tokio::sync::mpsc;

use super::relay_channel::{Accepted, RelayChannel};
use super::relay_stream::Inbound;

impl RelayChannel {
    /// One frame from the agent.
    pub(super) fn dispatch(
        self: &Arc<Self>,
        id: u32,
        message: Message,
        accepted: &mpsc::UnboundedSender<Accepted>,
    ) {
        match message {
            // Again for a stream it has: the id no longer says which connection is meant.
            Message::Accepted { .. } if id & AGENT_STREAM != 0 && self.is_open(id) => {
                self.abort(id)
            }
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
                    if matches!(inbound, Inbound::Abort) {
                        slot.shared.abort();
                    }
                    let _ = slot.inbound.send(inbound);
                }
            }
            Message::Credit { bytes } => {
                if let Some(slot) = self.slots.lock().unwrap().get(&id) {
                    slot.shared.grant(bytes);
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
