//! The agent's output: one writer thread, fed frames from every request's thread, flushing
//! whenever nothing else is waiting. The queue is bounded: when the host reads slowly, a
//! command's output and a file's data wait in their pipe or file, not in the agent.
//! Frames go to stdout until the direct line is up; from then on to its socket, in order
//! (everything queued before the switch still goes to stdout).

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use container_isolation_agent::protocol::{encode, Message};

enum Out {
    Frame(Vec<u8>),
    Switch(UnixStream),
}

#[derive(Clone)]
pub struct FrameOut(SyncSender<Out>);

/// Frames queued towards the host before senders wait (at most `CHUNK` of data each).
const QUEUED: usize = 32;
/// Small frames are gathered up to this; one of a full chunk is written without a copy (a
/// `BufWriter` writes what does not fit its buffer directly).
const GATHER: usize = 1 << 16;

impl FrameOut {
    /// Starts the writer thread; it ends when every `FrameOut` is dropped.
    pub fn start() -> (FrameOut, std::thread::JoinHandle<()>) {
        let (sender, receiver) = sync_channel(QUEUED);
        let writer = std::thread::spawn(move || write_all(receiver));
        (FrameOut(sender), writer)
    }

    pub fn send(&self, id: u32, message: &Message) {
        let _ = self.0.send(Out::Frame(encode(id, message)));
    }

    /// Sends bytes that already are a whole frame.
    pub fn send_frame(&self, frame: Vec<u8>) {
        let _ = self.0.send(Out::Frame(frame));
    }

    /// Frames sent after this go to `line` instead of stdout.
    pub fn switch(&self, line: UnixStream) {
        let _ = self.0.send(Out::Switch(line));
    }
}

type Sink = std::io::BufWriter<Box<dyn Write + Send>>;

fn write_all(frames: Receiver<Out>) {
    let mut out: Sink = std::io::BufWriter::with_capacity(GATHER, Box::new(std::io::stdout()));
    while let Ok(item) = frames.recv() {
        if !write(&mut out, item) {
            return;
        }
        while let Ok(more) = frames.try_recv() {
            if !write(&mut out, more) {
                return;
            }
        }
        if out.flush().is_err() {
            return;
        }
    }
}

fn write(out: &mut Sink, item: Out) -> bool {
    match item {
        Out::Frame(frame) => out.write_all(&frame).is_ok(),
        Out::Switch(line) => {
            let flushed = out.flush().is_ok();
            *out = std::io::BufWriter::with_capacity(GATHER, Box::new(line));
            flushed
        }
    }
}
