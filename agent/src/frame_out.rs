//! The agent's output: every sender writes its frames itself, whole, under one lock, so a
//! reply leaves the moment it is made, with no hop through another thread (one wake-up
//! less on every command's end and every relayed piece). A sender waits while the host
//! reads slowly (behind the lock): a command's output, a file's data and a relayed
//! stream's bytes wait in their pipe, file or socket, not in the agent. Frames go to stdout
//! until the direct line is up; from then on to its socket (the switch is made under the
//! same lock, so everything sent before it still goes to stdout, in order).

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

use container_isolation_agent::protocol::{encode, Message};

struct Sink {
    out: Box<dyn Write + Send>,
    /// A write failed: the host is gone, and nothing more is written.
    broken: bool,
}

#[derive(Clone)]
pub struct FrameOut(Arc<Mutex<Sink>>);

impl FrameOut {
    /// Frames written by their senders, to stdout (a descriptor of its own, unbuffered).
    pub fn direct() -> FrameOut {
        let out: Box<dyn Write + Send> = match std::io::stdout().as_fd().try_clone_to_owned() {
            Ok(fd) => Box::new(std::fs::File::from(fd)),
            Err(_) => Box::new(std::io::sink()),
        };
        FrameOut(Arc::new(Mutex::new(Sink { out, broken: false })))
    }

    pub fn send(&self, id: u32, message: &Message) {
        self.send_frame(encode(id, message));
    }

    /// Sends bytes that already are a whole frame.
    pub fn send_frame(&self, frame: Vec<u8>) {
        let mut sink = self.lock();
        if !sink.broken && sink.out.write_all(&frame).is_err() {
            sink.broken = true;
        }
    }

    /// Frames sent after this go to `line` instead of stdout.
    pub fn switch(&self, line: UnixStream) {
        self.lock().out = Box::new(line);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Sink> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}
