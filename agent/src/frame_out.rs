//! The agent's stdout: one writer thread, fed frames from every request's thread, flushing
//! whenever nothing else is waiting. The queue is bounded: when the host reads slowly, a
//! command's output and a file's data wait in their pipe or file, not in the agent.

use std::io::Write;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use container_isolation_agent::protocol::{encode, Message};

#[derive(Clone)]
pub struct FrameOut(SyncSender<Vec<u8>>);

/// Frames queued towards stdout before senders wait (at most `CHUNK` of data each).
const QUEUED: usize = 32;

impl FrameOut {
    /// Starts the writer thread; it ends when every `FrameOut` is dropped.
    pub fn start() -> (FrameOut, std::thread::JoinHandle<()>) {
        let (sender, receiver) = sync_channel(QUEUED);
        let writer = std::thread::spawn(move || write_all(receiver));
        (FrameOut(sender), writer)
    }

    pub fn send(&self, id: u32, message: &Message) {
        let _ = self.0.send(encode(id, message));
    }

    /// Sends bytes that already are a whole frame.
    pub fn send_frame(&self, frame: Vec<u8>) {
        let _ = self.0.send(frame);
    }
}

fn write_all(frames: Receiver<Vec<u8>>) {
    let stdout = std::io::stdout();
    // Small frames are gathered; one of a full chunk goes to stdout without a copy (a
    // `BufWriter` writes what does not fit its buffer directly).
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    while let Ok(frame) = frames.recv() {
        if out.write_all(&frame).is_err() {
            return;
        }
        while let Ok(more) = frames.try_recv() {
            if out.write_all(&more).is_err() {
                return;
            }
        }
        if out.flush().is_err() {
            return;
        }
    }
}
