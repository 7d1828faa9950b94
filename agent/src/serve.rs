//! `agent serve`: reads frames from stdin and dispatches them by request id — commands to
//! their reapers, file operations to threads acting as the caller's user, a write's data to
//! its thread. At the end of stdin (the host is gone) every command's tree is killed and
//! every unfinished write abandoned, so nothing the host started outlives it.
//!
//! Once the host has accepted the direct line (`Line`, see `line`), frames are read from and
//! written to its socket instead; stdin stays the lifeline: its end (or the line's) ends the
//! agent as before.

use std::collections::HashMap;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, Mutex};

use container_isolation_agent::protocol::{agreed_version, Message, CONTROL, MAX_FRAME};

use super::creds::act_as;
use super::detached;
use super::files::{self, failed, quoted};
use super::frame_in::FrameIn;
use super::frame_out::FrameOut;
use super::line;
use super::process::{self, Registry};
use super::reply_window::{Window, Windows};
use super::terminal;
use super::write::{self, WriteInput};

/// A write's data frames buffered towards its thread before the reader waits for it.
const WRITE_BACKLOG: usize = 8;

struct Server {
    out: FrameOut,
    processes: Registry,
    writes: HashMap<u32, SyncSender<WriteInput>>,
    windows: Windows,
    umask: u32,
}

/// The process umask, read once (setting it is the only way to read it).
fn current_umask() -> u32 {
    // SAFETY: umask has no failure mode; the old value is put back at once.
    unsafe {
        let old = libc::umask(0o022);
        libc::umask(old);
        old
    }
}

impl Server {
    /// Runs `op` on a thread of its own as `creds`, replying with what it returns.
    fn as_user(
        &self,
        id: u32,
        creds: container_isolation_agent::protocol::Creds,
        path: String,
        op: impl FnOnce(&str) -> Message + Send + 'static,
    ) {
        let (out, theirs) = (self.out.clone(), self.out.clone());
        let spawned = detached::spawn(move || {
            let reply = match act_as(&creds) {
                Ok(()) => op(&path),
                Err(e) => failed(&e, &path),
            };
            theirs.send(id, &reply);
        });
        if let Err(e) = spawned {
            out.send(id, &failed(&e, "a thread for the request"));
        }
    }

    /// Runs `op` on a thread of its own as `creds`; it sends its replies itself, within
    /// the request's reply window.
    fn streamed(
        &self,
        id: u32,
        creds: container_isolation_agent::protocol::Creds,
        path: String,
        op: impl FnOnce(u32, &str, &FrameOut, &Window) + Send + 'static,
    ) {
        let (out, windows) = (self.out.clone(), self.windows.clone());
        let window = windows.open(id);
        let spawned = detached::spawn(move || {
            match act_as(&creds) {
                Ok(()) => op(id, &path, &out, &window),
                Err(e) => out.send(id, &failed(&e, &path)),
            }
            windows.finish(id);
        });
        if let Err(e) = spawned {
            self.windows.finish(id);
            self.out.send(id, &failed(&e, "a thread for the request"));
        }
    }

    fn dispatch(&mut self, id: u32, message: Message) {
        let umask = self.umask;
        match message {
            Message::Hello { version } => self.out.send(
                CONTROL,
                &Message::Welcome {
                    version: agreed_version(version),
                    pid: std::process::id(),
                },
            ),
            Message::Ping => self.out.send(id, &Message::Pong),
            Message::Credit { bytes } => self.windows.grant(id, bytes),
            Message::Spawn(spawn) => {
                let (out, processes) = (self.out.clone(), self.processes.clone());
                if let Err(e) = process::start(id, spawn, out, processes, &self.windows) {
                    self.out.send(id, &failed(&e, "spawn"));
                }
            }
            Message::Terminal {
                spawn,
                cols,
                rows,
                acks,
            } => {
                let (out, processes) = (self.out.clone(), self.processes.clone());
                let size = (cols, rows);
                let started = terminal::start(id, spawn, size, acks, out, processes, &self.windows);
                if let Err(e) = started {
                    self.out.send(id, &failed(&e, "a terminal"));
                }
            }
            Message::Resize { cols, rows } => self.running(id, |p| p.resize(cols, rows)),
            Message::Stdin(data) => self.running(id, |p| p.stdin(Some(data))),
            Message::StdinEnd => self.running(id, |p| p.stdin(None)),
            // Both wait for the command to have started, on a thread of their own.
            Message::Signal { signo } => self.signal(id, move |p| p.signal(signo)),
            Message::Kill => self.signal(id, process::Running::kill),
            Message::StatPath {
                path,
                follow,
                creds,
            } => self.as_user(id, creds, path, move |p| files::stat(p, follow)),
            Message::Mkdir { path, creds } => self.as_user(id, creds, path, files::make_dirs),
            Message::ReadDir { path, creds } => self.streamed(id, creds, path, files::read_dir),
            Message::Read { path, creds } => self.streamed(id, creds, path, files::read),
            Message::Write { path, creds } => {
                let (sender, receiver) = sync_channel(WRITE_BACKLOG);
                let out = self.out.clone();
                let spawned = detached::spawn(move || match act_as(&creds) {
                    Ok(()) => write::write(id, &path, umask, receiver, &out),
                    Err(e) => out.send(id, &failed(&e, &path)),
                });
                match spawned {
                    Ok(()) => {
                        self.writes.insert(id, sender);
                    }
                    Err(e) => self.out.send(id, &failed(&e, "a thread for the write")),
                }
            }
            Message::Data(data) => self.queue_write(id, WriteInput::Data(data), false),
            Message::End => self.queue_write(id, WriteInput::End, true),
            Message::Abort => {
                self.windows.close(id);
                self.queue_write(id, WriteInput::Abort, true)
            }
            other => self.out.send(
                id,
                &Message::Failed {
                    errno: libc::EINVAL,
                    message: format!("unexpected message {}", quoted(&format!("{other:?}"))),
                },
            ),
        }
    }

    fn entry(&self, id: u32) -> Option<Arc<process::Running>> {
        self.processes.lock().unwrap().get(&id).cloned()
    }

    fn running(&self, id: u32, op: impl FnOnce(&process::Running)) {
        if let Some(p) = self.entry(id) {
            op(&p);
        }
    }

    /// Signals command `id` with `op` on a thread of its own (here, when none can be had:
    /// a kill must get through a fork bomb); replies `Signalled`.
    fn signal(&self, id: u32, op: impl FnOnce(&process::Running) -> u32 + Send + 'static) {
        let (out, entry) = (self.out.clone(), self.entry(id));
        detached::spawn_or_here(move || {
            let count = entry.map(|p| op(&p)).unwrap_or(0);
            out.send(id, &Message::Signalled { count });
        });
    }

    fn queue_write(&mut self, id: u32, input: WriteInput, last: bool) {
        let sender = if last {
            self.writes.remove(&id)
        } else {
            self.writes.get(&id).cloned()
        };
        if let Some(sender) = sender {
            let _ = sender.send(input);
        }
    }

    /// The host is gone: abandon writes, kill every command's tree.
    fn shut_down(&mut self) {
        self.windows.close_all();
        for (_, sender) in self.writes.drain() {
            let _ = sender.send(WriteInput::Abort);
        }
        let running: Vec<_> = self.processes.lock().unwrap().values().cloned().collect();
        for p in running {
            p.kill();
        }
    }
}

/// Frame buffers (up to `MAX_FRAME`, one per chunk of a file or an output) come from the
/// heap and go back to it, reused by the next: above glibc's default threshold each would be
/// a fresh mapping whose every page faults in zeroed. What the heap keeps free is bounded by
/// the trim threshold: a few frames' worth, as every command's reaper is forked from this
/// process and copies its page tables.
fn reuse_frame_buffers() {
    // SAFETY: mallopt only tunes the allocator; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 2 * MAX_FRAME as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 4 * MAX_FRAME as libc::c_int);
    }
}

pub fn run() -> i32 {
    reuse_frame_buffers();
    let out = FrameOut::direct();
    let mut server = Server {
        out,
        processes: Arc::new(Mutex::new(HashMap::new())),
        writes: HashMap::new(),
        windows: Windows::default(),
        umask: current_umask(),
    };
    let mut frames = FrameIn::new(Box::new(std::io::stdin()));
    let code = loop {
        match frames.next() {
            Ok(None) => break 0,
            Ok(Some(Ok((id, Message::Line { path, token })))) => {
                if let Some(line) = line::take(id, &path, &token, &server.out) {
                    frames.switch(Box::new(line));
                }
            }
            Ok(Some(Ok((id, message)))) => server.dispatch(id, message),
            Ok(Some(Err(e))) => {
                eprintln!("container-isolation-agent: {e}");
                server.shut_down();
                return 3;
            }
            Err(_) => break 1,
        }
    };
    server.shut_down();
    code
}
