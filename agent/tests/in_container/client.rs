//! `Agent`: a small blocking client of the agent in `serve` mode under `docker exec -i`,
//! speaking the protocol with the crate's own `encode`/`FrameBuffer`. A reader thread
//! splits the agent's stdout into frames; replies are kept per request id until asked for.

use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use container_isolation_agent::protocol::{
    encode, reply_cost, Creds, FrameBuffer, Message, CHUNK, REPLY_WINDOW,
};

use super::support::spawn_of;

/// How long any one reply may take before the test fails.
pub const REPLY_WAIT: Duration = Duration::from_secs(30);

/// A `Failed` reply.
#[derive(Debug)]
pub struct Failure {
    pub errno: i32,
    pub message: String,
}

impl Failure {
    /// `reply`, which must be `Failed`.
    pub fn of(reply: Message) -> Failure {
        match reply {
            Message::Failed { errno, message } => Failure { errno, message },
            other => panic!("expected Failed, got {other:?}"),
        }
    }
}

/// The agent in `serve` mode under `docker exec -i`, and the frames it has sent.
pub struct Agent {
    child: Child,
    stdin: Option<ChildStdin>,
    frames: Receiver<Result<(u32, Message), String>>,
    /// While set, nothing is read from the agent's stdout (a slow host).
    paused: Arc<AtomicBool>,
    pending: HashMap<u32, VecDeque<Message>>,
    /// Reply bytes taken per request and not yet granted back (as the host does).
    consumed: HashMap<u32, u32>,
    /// Whether replies taken are granted back (off: a host that stopped reading).
    pub granting: bool,
    next_id: u32,
}

/// The end of a command: its output and how it exited.
#[derive(Debug)]
pub struct Ran {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub code: i32,
    pub signal: i32,
}

impl Agent {
    pub fn start(container: &str) -> Agent {
        let mut child = Command::new("docker")
            .args([
                "exec",
                "-i",
                container,
                "/.container-isolation-agent",
                "serve",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("docker exec the agent");
        let mut stdout = child.stdout.take().unwrap();
        let (sender, frames) = channel();
        let paused = Arc::new(AtomicBool::new(false));
        let pausing = paused.clone();
        std::thread::spawn(move || {
            let mut buffer = FrameBuffer::default();
            let mut bytes = vec![0u8; 1 << 16];
            loop {
                while pausing.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                let Ok(n) = stdout.read(&mut bytes) else {
                    return;
                };
                if n == 0 {
                    return;
                }
                buffer.push(&bytes[..n]);
                while let Some(frame) = buffer.next_frame() {
                    let failed = frame.is_err();
                    if sender.send(frame.map_err(|e| e.to_string())).is_err() || failed {
                        return;
                    }
                }
            }
        });
        let stdin = child.stdin.take();
        Agent {
            child,
            stdin,
            frames,
            paused,
            pending: HashMap::new(),
            consumed: HashMap::new(),
            granting: true,
            next_id: 1,
        }
    }

    pub fn send(&mut self, id: u32, message: &Message) {
        self.send_raw(&encode(id, message));
    }

    /// Sends bytes that need not be a frame.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("the agent's stdin is open");
        stdin.write_all(bytes).expect("write to the agent");
        stdin.flush().unwrap();
    }

    /// Sends `message` as a new request; returns its id.
    pub fn request(&mut self, message: &Message) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(id, message);
        id
    }

    /// Stops (or resumes) reading the agent's stdout.
    pub fn pause(&self, paused: bool) {
        self.paused.store(paused, Ordering::Release);
    }

    /// Closes the agent's stdin: the host is gone.
    pub fn close(&mut self) {
        self.stdin = None;
    }

    /// Waits for `docker exec` (the agent) to end; its exit code.
    pub fn wait_exit(&mut self, within: Duration) -> Option<i32> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }

    /// The next reply to request `id`; fails the test after `REPLY_WAIT`.
    pub fn recv(&mut self, id: u32) -> Message {
        self.try_recv(id, REPLY_WAIT)
            .unwrap_or_else(|| panic!("no reply to request {id} within {REPLY_WAIT:?}"))
    }

    /// Hands the agent back the room `message` took, a quarter window at a time.
    fn grant(&mut self, id: u32, message: &Message) {
        if !self.granting {
            return;
        }
        let consumed = self.consumed.entry(id).or_default();
        *consumed += reply_cost(message);
        if *consumed >= REPLY_WINDOW / 4 {
            let bytes = std::mem::take(consumed);
            self.send(id, &Message::Credit { bytes });
        }
    }

    pub fn try_recv(&mut self, id: u32, within: Duration) -> Option<Message> {
        let deadline = Instant::now() + within;
        loop {
            if let Some(message) = self.pending.get_mut(&id).and_then(VecDeque::pop_front) {
                self.grant(id, &message);
                return Some(message);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.frames.recv_timeout(left) {
                Ok(Ok((from, message))) => self.pending.entry(from).or_default().push_back(message),
                Ok(Err(e)) => panic!("the agent sent a malformed frame: {e}"),
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => panic!("the agent's stdout ended"),
            }
        }
    }

    /// Sends `Stdin` frames of at most `CHUNK` bytes, then `StdinEnd` unless `more`.
    pub fn stdin(&mut self, id: u32, data: &[u8]) {
        for piece in data.chunks(CHUNK) {
            self.send(id, &Message::Stdin(piece.to_vec()));
        }
        self.send(id, &Message::StdinEnd);
    }

    /// Spawns `argv` as root; returns the request id once `Spawned` has arrived.
    pub fn spawn(&mut self, argv: &[&str], stdin: bool) -> u32 {
        let id = self.request(&Message::Spawn(spawn_of(argv, stdin)));
        match self.recv(id) {
            Message::Spawned { .. } => id,
            other => panic!("spawn {argv:?}: {other:?}"),
        }
    }

    /// Collects a command's output until it exits (`Signalled` replies are skipped).
    pub fn finish(&mut self, id: u32) -> Ran {
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        loop {
            match self.recv(id) {
                Message::Output {
                    stderr: false,
                    data,
                } => stdout.extend(data),
                Message::Output { stderr: true, data } => stderr.extend(data),
                Message::Signalled { .. } => {}
                Message::Exited { code, signal } => {
                    return Ran {
                        stdout,
                        stderr,
                        code,
                        signal,
                    }
                }
                other => panic!("command {id}: unexpected {other:?}"),
            }
        }
    }

    pub fn run(&mut self, argv: &[&str]) -> Ran {
        let id = self.spawn(argv, false);
        self.finish(id)
    }

    /// A file's content as `Read` returns it, or the `Failed` reply.
    pub fn read(&mut self, path: &str, creds: Creds) -> Result<Vec<u8>, Failure> {
        let id = self.request(&Message::Read {
            path: path.into(),
            creds,
        });
        let mut content = Vec::new();
        loop {
            match self.recv(id) {
                Message::Data(data) => content.extend(data),
                Message::End => return Ok(content),
                other => return Err(Failure::of(other)),
            }
        }
    }

    /// Writes `data` in `Data` frames; the reply (`Done` or `Failed`).
    pub fn write(&mut self, path: &str, creds: Creds, data: &[u8]) -> Message {
        let id = self.request(&Message::Write {
            path: path.into(),
            creds,
        });
        for piece in data.chunks(CHUNK) {
            self.send(id, &Message::Data(piece.to_vec()));
        }
        self.send(id, &Message::End);
        self.recv(id)
    }

    /// One request answered by one reply (`StatPath`, `Mkdir`, …).
    pub fn ask(&mut self, message: Message) -> Message {
        let id = self.request(&message);
        self.recv(id)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.stdin = None;
        if self.wait_exit(Duration::from_secs(5)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
