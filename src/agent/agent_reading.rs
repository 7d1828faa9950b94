//! The reader of one agent connection: frames from the exec's stdout and, once it is handed
//! over, from the direct line, each handed to the queue of the request its id names without
//! ever waiting for a consumer. Its end ends every request, the writer (which may be stuck
//! writing to an exec whose process is gone) and, when the agent failed, the agent's process
//! (a replaced agent need not stop when its stdin ends, and what it writes costs the
//! engine's time). Either source ending ends the connection: the exec's end means the agent
//! is gone, the line's that it dropped the line.

use std::sync::Arc;

use container_isolation_agent::protocol::{Message, ProtocolError, CONTROL};
use tokio::sync::oneshot;

use super::agent_channel::AgentStop;
use super::agent_frames::AgentFrames;
use super::agent_health::Health;
use super::agent_line::LineFrames;
use super::agent_routes::Routes;

pub struct Reading {
    pub routes: Arc<Routes>,
    pub health: Arc<Health>,
    pub writer: tokio::task::AbortHandle,
    pub stop: AgentStop,
    pub handover: oneshot::Receiver<LineFrames>,
}

type Frame = Option<Result<(u32, Message), ProtocolError>>;

impl Reading {
    pub async fn run(mut self, mut frames: AgentFrames) {
        let mut line: Option<LineFrames> = None;
        let mut waiting = true;
        loop {
            let frame: Frame = tokio::select! {
                frame = frames.next() => frame,
                frame = next_on(&mut line), if line.is_some() => frame,
                given = &mut self.handover, if waiting => {
                    waiting = false;
                    line = given.ok();
                    continue;
                }
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
            (self.stop)();
        }
    }
}

async fn next_on(line: &mut Option<LineFrames>) -> Frame {
    match line {
        Some(line) => line.next().await,
        None => std::future::pending().await,
    }
}
