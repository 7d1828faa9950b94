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
use tokio::io::AsyncWrite;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::{mpsc, oneshot};

use crate::agent::{AgentFrames, FrameSink, LineFrames};

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
pub async fn write_frames(input: Pin<Box<dyn AsyncWrite + Send>>, outbound: Outbound) {
    let Outbound {
        mut queue,
        mut offer,
        mut handover,
    } = outbound;
    let mut sink = FrameSink::new(input);
    let (mut waiting, mut paused) = (true, false);
    loop {
        let frame = tokio::select! {
            biased;
            given = &mut handover, if waiting => {
                (waiting, paused) = (false, false);
                sink.line = given.ok().flatten();
                continue;
            }
            Some(frame) = offer.recv(), if waiting && !paused => {
                paused = true;
                frame
            }
            Some(frame) = queue.recv(), if !paused => frame,
            else => break,
        };
        if sink.write(&frame).await.is_err() {
            break;
        }
    }
    sink.close().await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn written(reader: &mut (impl tokio::io::AsyncRead + Unpin), n: usize) -> Vec<u8> {
        let mut got = vec![0u8; n];
        reader.read_exact(&mut got).await.unwrap();
        got
    }

    /// The other ends of a writer's stdin, queue, offer and handover.
    type Ends = (
        tokio::io::DuplexStream,
        mpsc::Sender<Vec<u8>>,
        mpsc::Sender<Vec<u8>>,
        oneshot::Sender<Option<OwnedWriteHalf>>,
    );

    /// A writer with its stdin, queue, offer and handover.
    fn writer() -> Ends {
        let (input, stdin) = tokio::io::duplex(1024);
        let (queue_tx, queue) = mpsc::channel(8);
        let (offer_tx, offer) = mpsc::channel(1);
        let (handover_tx, handover) = oneshot::channel();
        let outbound = Outbound {
            queue,
            offer,
            handover,
        };
        tokio::spawn(write_frames(Box::pin(input), outbound));
        (stdin, queue_tx, offer_tx, handover_tx)
    }

    #[tokio::test]
    async fn nothing_follows_the_offer_on_stdin_and_the_rest_goes_over_the_line() {
        let (mut stdin, queue, offer, handover) = writer();
        queue.send(b"before".to_vec()).await.unwrap();
        assert_eq!(written(&mut stdin, 6).await, b"before");
        offer.send(b"offer".to_vec()).await.unwrap();
        assert_eq!(written(&mut stdin, 5).await, b"offer");
        queue.send(b"held".to_vec()).await.unwrap();
        tokio::task::yield_now().await;
        let (ours, mut theirs) = tokio::net::UnixStream::pair().unwrap();
        handover.send(Some(ours.into_split().1)).unwrap();
        assert_eq!(written(&mut theirs, 4).await, b"held");
        queue.send(b"after".to_vec()).await.unwrap();
        assert_eq!(written(&mut theirs, 5).await, b"after");
        drop(queue);
        drop(offer);
        // Stdin got nothing past the offer, and is shut at the end.
        let mut rest = Vec::new();
        stdin.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty());
    }

    #[tokio::test]
    async fn a_line_not_taken_resumes_stdin_in_order() {
        let (mut stdin, queue, offer, handover) = writer();
        offer.send(b"offer".to_vec()).await.unwrap();
        queue.send(b"held".to_vec()).await.unwrap();
        assert_eq!(written(&mut stdin, 5).await, b"offer");
        handover.send(None).unwrap();
        queue.send(b"next".to_vec()).await.unwrap();
        assert_eq!(written(&mut stdin, 8).await, b"heldnext");
    }

    #[tokio::test]
    async fn without_an_offer_the_writer_never_waits() {
        let (mut stdin, queue, _offer, handover) = writer();
        queue.send(b"one".to_vec()).await.unwrap();
        assert_eq!(written(&mut stdin, 3).await, b"one");
        drop(handover);
        queue.send(b"two".to_vec()).await.unwrap();
        assert_eq!(written(&mut stdin, 3).await, b"two");
    }
}
