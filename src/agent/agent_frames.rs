//! What an agent's channel says: its stdout cut into frames, its stderr kept (bounded) for
//! error messages. Shared by the command channel and the network relay's channel.

use std::sync::{Arc, Mutex};

use container_isolation_agent::protocol::{FrameBuffer, Message, ProtocolError};
use futures_util::StreamExt;

use super::agent_channel::AgentOutput;
use crate::output::StreamKind;

/// How much of what the agent writes to stderr is kept for an error message.
const STDERR_KEPT: usize = 4096;

pub struct AgentFrames {
    output: AgentOutput,
    frames: FrameBuffer,
    pub stderr: Arc<Mutex<Vec<u8>>>,
}

impl AgentFrames {
    pub fn new(output: AgentOutput) -> AgentFrames {
        AgentFrames {
            output,
            frames: FrameBuffer::default(),
            stderr: Arc::default(),
        }
    }

    /// The next frame; `None` when the output ends, an error for a malformed frame.
    pub async fn next(&mut self) -> Option<Result<(u32, Message), ProtocolError>> {
        loop {
            if let Some(frame) = self.frames.next_frame() {
                // A flood always has a frame ready: the reader gives its worker back now and
                // then, so that timers, kills and other containers' readers run on.
                tokio::task::consume_budget().await;
                return Some(frame);
            }
            match self.output.next().await? {
                (StreamKind::Stdout, bytes) => self.frames.push(&bytes),
                (StreamKind::Stderr, bytes) => {
                    let mut kept = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
                    let room = STDERR_KEPT.saturating_sub(kept.len());
                    kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
                }
            }
        }
    }
}
