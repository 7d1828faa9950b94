//! The agent's output, in one of two ways. `direct` (the serve loop's): every request's
//! thread writes its frames itself, whole, under one lock, so a reply leaves the moment it
//! is made, with no hop through another thread (one wake-up less on every command's end).
//! `start` (the relay's): one writer thread, fed frames from every stream's thread,
//! flushing whenever nothing else is waiting. Either way a sender waits while the host
//! reads slowly (behind the lock, or on the bounded queue): a command's output and a
//! file's data wait in their pipe or file, not in the agent. Frames go to stdout until the
//! direct line is up; from then on to its socket, in order (everything sent before the
//! switch still goes to stdout).

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use container_isolation_agent::protocol::{encode, Message};

enum Out {
    Frame(Vec<u8>),
    Switch(UnixStream),
}

/// Where frames are written in place (`direct`).
struct Sink {
    out: Box<dyn Write + Send>,
    /// A write failed: the host is gone, and nothing more is written.
    broken: bool,
}

#[derive(Clone)]
enum Route {
    Queued(SyncSender<Out>),
    Direct(Arc<Mutex<Sink>>),
}

#[derive(Clone)]
pub struct FrameOut(Route);

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
        (FrameOut(Route::Queued(sender)), writer)
    }

    /// Frames written by their senders, to stdout (a descriptor of its own, unbuffered).
    pub fn direct() -> FrameOut {
        let out: Box<dyn Write + Send> = match std::io::stdout().as_fd().try_clone_to_owned() {
            Ok(fd) => Box::new(std::fs::File::from(fd)),
            Err(_) => Box::new(std::io::sink()),
        };
        FrameOut(Route::Direct(Arc::new(Mutex::new(Sink {
            out,
            broken: false,
        }))))
    }

    pub fn send(&self, id: u32, message: &Message) {
        self.send_frame(encode(id, message));
    }

    /// Sends bytes that already are a whole frame.
    pub fn send_frame(&self, frame: Vec<u8>) {
        match &self.0 {
            Route::Queued(sender) => {
                let _ = sender.send(Out::Frame(frame));
            }
            Route::Direct(sink) => {
                let mut sink = sink.lock().unwrap_or_else(|e| e.into_inner());
                if !sink.broken && sink.out.write_all(&frame).is_err() {
                    sink.broken = true;
                }
            }
        }
    }

    /// Frames sent after this go to `line` instead of stdout.
    pub fn switch(&self, line: UnixStream) {
        match &self.0 {
            Route::Queued(sender) => {
                let _ = sender.send(Out::Switch(line));
            }
            Route::Direct(sink) => {
                sink.lock().unwrap_or_else(|e| e.into_inner()).out = Box::new(line);
            }
        }
    }
}

type Buffered = std::io::BufWriter<Box<dyn Write + Send>>;

fn write_all(frames: Receiver<Out>) {
    let mut out: Buffered = std::io::BufWriter::with_capacity(GATHER, Box::new(std::io::stdout()));
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

fn write(out: &mut Buffered, item: Out) -> bool {
    match item {
        Out::Frame(frame) => out.write_all(&frame).is_ok(),
        Out::Switch(line) => {
            let flushed = out.flush().is_ok();
            *out = std::io::BufWriter::with_capacity(GATHER, Box::new(line));
            flushed
        }
    }
}
