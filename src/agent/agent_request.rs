//! One request to the agent, seen from the caller: its replies in order, the credit that
//! lets the agent send more of them, and, when the caller gives up on it before its last
//! reply, an `Abort` that tells the agent to stop sending (a write is abandoned whole).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use container_isolation_agent::protocol::{
    data_header, encode, reply_cost, Message, DATA_HEADER, REPLY_WINDOW,
};

use super::agent_connection::AgentConnection;
use super::agent_routes::RouteEnd;
use crate::error::Result;

/// Consumed reply bytes handed back to the agent at once as `Credit`.
const GRANT_STEP: u32 = REPLY_WINDOW / 4;

/// The replies to one request, in order.
pub struct AgentRequest {
    pub id: u32,
    route: RouteEnd,
    /// Reply bytes consumed and not yet granted back.
    consumed: u32,
    /// Whether the agent has sent the request's last reply.
    ended: bool,
    connection: Arc<AgentConnection>,
}

impl AgentConnection {
    /// Sends `message` as a new request; its replies arrive on the returned handle.
    pub async fn request(self: &Arc<Self>, message: &Message) -> Result<AgentRequest> {
        let (id, route) = self.open_route()?;
        let request = AgentRequest::new(id, route, self.clone());
        request.send(message).await?;
        Ok(request)
    }
}

/// Whether `message` is the last reply a request gets.
fn is_last(message: &Message) -> bool {
    matches!(
        message,
        Message::Exited { .. }
            | Message::End
            | Message::Done
            | Message::Failed { .. }
            | Message::Stat(_)
    )
}

impl AgentRequest {
    fn new(id: u32, route: RouteEnd, connection: Arc<AgentConnection>) -> Self {
        AgentRequest {
            id,
            route,
            consumed: 0,
            ended: false,
            connection,
        }
    }

    /// Sends a follow-up frame of this request (stdin, a write's data).
    pub async fn send(&self, message: &Message) -> Result<()> {
        self.sender().send(message).await
    }

    /// Sends `data` (at most `CHUNK`) as a `Data` frame, copied once, into the frame.
    pub async fn send_data(&self, data: &[u8]) -> Result<()> {
        let mut frame = Vec::with_capacity(DATA_HEADER + data.len());
        frame.extend_from_slice(&data_header(self.id, data.len()));
        frame.extend_from_slice(data);
        self.connection.send_frame(frame).await
    }

    /// The next reply; an error when the connection is gone.
    pub async fn recv(&mut self) -> Result<Message> {
        match self.route.replies.recv().await {
            Some(message) => Ok(self.taken(message)),
            None => Err(self.connection.lost()),
        }
    }

    /// A reply that has already arrived, if any.
    pub fn try_recv(&mut self) -> Option<Message> {
        let message = self.route.replies.try_recv().ok()?;
        Some(self.taken(message))
    }

    fn taken(&mut self, message: Message) -> Message {
        self.ended |= is_last(&message);
        self.consumed = self.consumed.saturating_add(reply_cost(&message));
        if self.consumed >= GRANT_STEP && !self.ended {
            let credit = Message::Credit {
                bytes: self.consumed,
            };
            self.route
                .granted
                .fetch_add(u64::from(self.consumed), Ordering::AcqRel);
            let _ = self.connection.send_control(encode(self.id, &credit));
            self.consumed = 0;
        }
        message
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
    /// Queues `message` behind earlier data frames (waits while that queue is full).
    pub async fn send(&self, message: &Message) -> Result<()> {
        self.connection.send_frame(encode(self.id, message)).await
    }

    /// Sends `message` ahead of queued data, without waiting (a signal, a kill).
    pub fn send_now(&self, message: &Message) -> Result<()> {
        self.connection.send_control(encode(self.id, message))
    }
}

impl Drop for AgentRequest {
    fn drop(&mut self) {
        self.connection.close_route(self.id);
        if !self.ended {
            let _ = self
                .connection
                .send_control(encode(self.id, &Message::Abort));
        }
    }
}
