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
    mut input: Pin<Box<dyn AsyncWrite + Send>>,
    mut urgent: mpsc::UnboundedReceiver<Vec<u8>>,
    mut queue: mpsc::Receiver<Vec<u8>>,
    mut handover: oneshot::Receiver<OwnedWriteHalf>,
) {
    let mut line: Option<OwnedWriteHalf> = None;
    let mut waiting = true;
    loop {
        let frame = tokio::select! {
            biased;
            given = &mut handover, if waiting => {
                waiting = false;
                line = given.ok();
                continue;
            }
            Some(frame) = urgent.recv() => frame,
            Some(frame) = queue.recv() => frame,
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
