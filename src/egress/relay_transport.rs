//! How the relay's frames travel: over its exec's stdin and stdout, until the relay takes
//! the direct line; from then on over the line's socket, with the exec held open as the
//! relay's lifeline (the end of either ends the channel).
//!
//! The switch keeps every stream's bytes in order both ways. Towards the relay: the writer
//! sends the `Line` offer and then nothing more until the offer is settled (the relay reads
//! no more of stdin once it has joined), then goes on over the line, or over stdin if the
//! line was not taken. From the relay: its `Done` is its last frame on stdout, and the line
//! is read only once that `Done` has been handed on and the offer settled.

use std::pin::Pin;

use container_isolation_agent::protocol::{Message, ProtocolError};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::{mpsc, oneshot};

use crate::agent::{AgentFrames, LineFrames};

/// Where the writer takes its frames from.
pub struct Outbound {
    /// Every frame but the offer.
    pub queue: mpsc::Receiver<Vec<u8>>,
    /// The `Line` offer; the writer waits for `handover` after sending it.
    pub offer: mpsc::Receiver<Vec<u8>>,
    /// The line's write half once the relay is on it, `None` (or dropped) when it is not.
    pub handover: oneshot::Receiver<Option<OwnedWriteHalf>>,
}

/// Writes frames until every sender is gone or a write fails; holds the exec's stdin open
/// all the while (its end tells the relay this host is gone).
pub async fn write_frames(mut input: Pin<Box<dyn AsyncWrite + Send>>, outbound: Outbound) {
    let Outbound {
        mut queue,
        mut offer,
        mut handover,
    } = outbound;
    let mut line: Option<OwnedWriteHalf> = None;
    let (mut waiting, mut paused) = (true, false);
    loop {
        let frame = tokio::select! {
            biased;
            given = &mut handover, if waiting => {
                (waiting, paused) = (false, false);
                line = given.ok().flatten();
                continue;
            }
            Some(frame) = offer.recv(), if waiting && !paused => {
                paused = true;
                frame
            }
            Some(frame) = queue.recv(), if !paused => frame,
            else => break,
        };
        let written = match line.as_mut() {
            Some(line) => line.write_all(&frame).await,
            None => input.write_all(&frame).await,
        };
        if written.is_err() {
            break;
        }
    }
    if let Some(mut line) = line {
        let _ = line.shutdown().await;
    }
    let _ = input.shutdown().await;
}

type Frame = Option<Result<(u32, Message), ProtocolError>>;

/// Hands every frame the relay sends, from its exec's stdout and then from the line, to
/// `deliver`, until either ends or a frame is malformed (returned as the reason).
pub async fn read_frames(
    mut exec: AgentFrames,
    mut handover: oneshot::Receiver<LineFrames>,
    mut deliver: impl FnMut(u32, Message),
) -> Option<ProtocolError> {
    let mut line: Option<LineFrames> = None;
    let mut waiting = true;
    loop {
        let frame: Frame = tokio::select! {
            frame = exec.next() => frame,
            frame = next_on(&mut line), if line.is_some() => frame,
            given = &mut handover, if waiting => {
                waiting = false;
                line = given.ok();
                continue;
            }
        };
        match frame {
            Some(Ok((id, message))) => deliver(id, message),
            Some(Err(e)) => return Some(e),
            None => return None,
        }
    }
}

async fn next_on(line: &mut Option<LineFrames>) -> Frame {
    match line {
        Some(line) => line.next().await,
        None => std::future::pending().await,
    }
}
