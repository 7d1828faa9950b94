//! The writer of one agent connection: control frames (credit, signals, kills, aborts,
//! pings) before queued data, so a stop never waits behind a large write. Frames go to the
//! exec's stdin until the direct line is handed over, then to the line; the exec's stdin is
//! held open all the while (its end would tell the agent the host is gone).

use std::pin::Pin;

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::{mpsc, oneshot};

/// Writes frames until both senders are gone or a write fails.
pub async fn write_frames(
    input: Pin<Box<dyn AsyncWrite + Send>>,
    mut urgent: mpsc::UnboundedReceiver<Vec<u8>>,
    mut queue: mpsc::Receiver<Vec<u8>>,
    mut handover: oneshot::Receiver<OwnedWriteHalf>,
) {
    let mut sink = FrameSink::new(input);
    let mut waiting = true;
    loop {
        let frame = tokio::select! {
            biased;
            given = &mut handover, if waiting => {
                waiting = false;
                sink.line = given.ok();
                continue;
            }
            Some(frame) = urgent.recv() => frame,
            Some(frame) = queue.recv() => frame,
            else => break,
        };
        if sink.write(&frame).await.is_err() {
            break;
        }
    }
    sink.close().await;
}

/// Where one connection's frames are written: the exec's stdin, or the direct line once it
/// is handed over; the stdin stays open until `close` (its end tells the other side that
/// this host is gone).
pub struct FrameSink {
    input: Pin<Box<dyn AsyncWrite + Send>>,
    pub line: Option<OwnedWriteHalf>,
}

impl FrameSink {
    pub fn new(input: Pin<Box<dyn AsyncWrite + Send>>) -> FrameSink {
        FrameSink { input, line: None }
    }

    pub async fn write(&mut self, frame: &[u8]) -> std::io::Result<()> {
        match self.line.as_mut() {
            Some(line) => line.write_all(frame).await,
            None => self.input.write_all(frame).await,
        }
    }

    /// Shuts the line (if any), then the exec's stdin.
    pub async fn close(mut self) {
        if let Some(mut line) = self.line.take() {
            let _ = line.shutdown().await;
        }
        let _ = self.input.shutdown().await;
    }
}
