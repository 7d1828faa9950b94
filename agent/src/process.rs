//! A command started for the host: its reaper (this binary in `reaper` mode, with a socket
//! on fd 3), output pipes read into `Output` frames, stdin fed from `Stdin` frames on a
//! thread of its own (a command that does not read cannot stall the agent), and `Exited`
//! sent once the command has exited and its output has ended.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex};

use container_isolation_agent::protocol::{encode, FrameBuffer, Message, Spawn, CHUNK};

use super::frame_out::FrameOut;
use super::tree;

/// The reaper's end of its socket to `serve`.
const CHANNEL_FD: i32 = 3;

/// Exit code of a command that could not be started (as the engine reports it).
const NOT_STARTED: i32 = 126;

/// What the host may still do to a command: signal its tree, feed its stdin.
pub struct Running {
    pub reaper: i32,
    stdin: Mutex<Option<Sender<Option<Vec<u8>>>>>,
    /// Whether the reaper has reported the command started (or failed to, or died):
    /// until then its tree may not have the command in it yet, and a signal would miss it.
    started: Mutex<bool>,
    reported: Condvar,
}

pub type Registry = Arc<Mutex<HashMap<u32, Arc<Running>>>>;

impl Running {
    pub fn stdin(&self, data: Option<Vec<u8>>) {
        let mut stdin = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sender) = stdin.as_ref() {
            let _ = sender.send(data.clone());
        }
        if data.is_none() {
            *stdin = None;
        }
    }

    /// Signals the tree once the command has started (so that `Signalled` follows
    /// `Spawned`, and a signal sent right after `Spawn` is not lost).
    pub fn signal(&self, signo: i32) -> u32 {
        self.wait_started();
        tree::signal(self.reaper, signo)
    }

    /// Kills the tree once the command has started (see `signal`).
    pub fn kill(&self) -> u32 {
        self.wait_started();
        tree::kill_all(self.reaper)
    }

    fn mark_started(&self) {
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.reported.notify_all();
    }

    fn wait_started(&self) {
        let started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        let _started = self
            .reported
            .wait_while(started, |started| !*started)
            .unwrap_or_else(|e| e.into_inner());
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid out-array of two.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn socket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: as above.
    let rc = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Starts `spawn` under a reaper; replies `Spawned`, output, and `Exited` under `id`.
pub fn start(id: u32, spawn: Spawn, out: FrameOut, registry: Registry) -> std::io::Result<()> {
    let (ours, theirs) = socket_pair()?;
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let stdin = if spawn.stdin { Some(pipe()?) } else { None };
    let mut reaper = Command::new(std::env::current_exe()?);
    reaper
        .arg("reaper")
        .stdout(Stdio::from(out_write))
        .stderr(Stdio::from(err_write));
    let mut stdin_write = None;
    match stdin {
        Some((read, write)) => {
            reaper.stdin(Stdio::from(read));
            stdin_write = Some(write);
        }
        None => {
            reaper.stdin(Stdio::null());
        }
    }
    let channel_fd = theirs.as_raw_fd();
    // SAFETY: dup2 and fcntl are async-signal-safe; fd 3 of the reaper becomes its end of
    // the socket. When that end already is fd 3 (another thread closed fd 3 while the pair
    // was made), dup2 would do nothing and leave it close-on-exec: it is cleared instead.
    unsafe {
        reaper.pre_exec(move || {
            let done = match channel_fd {
                CHANNEL_FD => libc::fcntl(CHANNEL_FD, libc::F_SETFD, 0),
                _ => libc::dup2(channel_fd, CHANNEL_FD),
            };
            if done < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = reaper.spawn()?;
    drop(reaper);
    drop(theirs);
    let mut socket = std::fs::File::from(ours);
    socket.write_all(&encode(id, &Message::Spawn(spawn)))?;
    let running = Arc::new(Running {
        reaper: child.id() as i32,
        stdin: Mutex::new(stdin_write.map(feed_stdin)),
        started: Mutex::new(false),
        reported: Condvar::new(),
    });
    registry.lock().unwrap().insert(id, running.clone());
    let outputs = [std::fs::File::from(out_read), std::fs::File::from(err_read)];
    std::thread::spawn(move || {
        coordinate(id, &mut socket, outputs, &out, &running);
        running.mark_started();
        // The reaper lives on while anything of the command does; then it is collected.
        // Our end of its socket stays open until then: its closing tells the reaper that
        // `serve` is gone, and that it must kill what is left.
        let _ = child.wait();
        drop(socket);
        registry.lock().unwrap().remove(&id);
    });
    Ok(())
}

/// Writes what the host sends to the command's stdin; `None` closes it.
fn feed_stdin(write: OwnedFd) -> Sender<Option<Vec<u8>>> {
    let (sender, receiver) = channel::<Option<Vec<u8>>>();
    std::thread::spawn(move || {
        let mut pipe = std::fs::File::from(write);
        while let Ok(Some(data)) = receiver.recv() {
            if pipe.write_all(&data).is_err() {
                return;
            }
        }
    });
    sender
}

/// Relays the reaper's reports and the command's output until both have ended.
fn coordinate(
    id: u32,
    socket: &mut std::fs::File,
    mut outputs: [std::fs::File; 2],
    out: &FrameOut,
    running: &Running,
) {
    let mut reports = Reports {
        id,
        out,
        running,
        frames: FrameBuffer::default(),
        started: false,
        exited: None,
    };
    let mut open = [true, true, true];
    let mut buf = vec![0u8; CHUNK];
    // Done once the command has exited and its output has ended; the reaper (the socket)
    // may outlive it, reaping what the command left running.
    while open.iter().any(|o| *o) && !(reports.exited.is_some() && !open[1] && !open[2]) {
        let fds = [
            socket.as_raw_fd(),
            outputs[0].as_raw_fd(),
            outputs[1].as_raw_fd(),
        ];
        // Output waits until the reaper has reported the command started (it may write
        // before the report arrives), so that `Spawned` comes first.
        let ready = reports.started || !open[0];
        let watched = [open[0], open[1] && ready, open[2] && ready];
        for i in readable(&fds, &watched) {
            let n = match i {
                0 => socket.read(&mut buf),
                _ => outputs[i - 1].read(&mut buf),
            }
            .unwrap_or(0);
            match (n, i) {
                (0, _) => open[i] = false,
                (_, 0) => reports.push(&buf[..n]),
                _ => out.send(
                    id,
                    &Message::Output {
                        stderr: i == 2,
                        data: buf[..n].to_vec(),
                    },
                ),
            }
        }
    }
    // No report from the reaper: it was killed, taking the command's status with it.
    let exited = reports.exited.unwrap_or(Message::Exited {
        code: 128 + libc::SIGKILL,
        signal: libc::SIGKILL,
    });
    out.send(id, &exited);
}

/// Which of the open `fds` can be read (or have ended) now; waits until one can.
fn readable(fds: &[i32; 3], open: &[bool; 3]) -> Vec<usize> {
    let mut polls: Vec<libc::pollfd> = (0..3)
        .filter(|&i| open[i])
        .map(|i| libc::pollfd {
            fd: fds[i],
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: polls is a valid array of pollfd.
    if unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, -1) } < 0 {
        return Vec::new();
    }
    polls
        .iter()
        .filter(|p| p.revents != 0)
        .filter_map(|p| fds.iter().position(|fd| *fd == p.fd))
        .collect()
}

/// What the reaper says about the command: started (`Spawned`), could not start
/// (`Failed`, told to the host as a command that exits `NOT_STARTED`), exited.
struct Reports<'a> {
    id: u32,
    out: &'a FrameOut,
    running: &'a Running,
    frames: FrameBuffer,
    started: bool,
    exited: Option<Message>,
}

impl Reports<'_> {
    fn push(&mut self, bytes: &[u8]) {
        self.frames.push(bytes);
        while let Some(Ok((_, message))) = self.frames.next_frame() {
            match message {
                Message::Failed { message, .. } => {
                    self.out.send(self.id, &Message::Spawned { pid: 0 });
                    self.running.mark_started();
                    self.started = true;
                    self.out.send(
                        self.id,
                        &Message::Output {
                            stderr: true,
                            data: format!("{message}\n").into_bytes(),
                        },
                    );
                    self.exited = Some(Message::Exited {
                        code: NOT_STARTED,
                        signal: 0,
                    });
                }
                Message::Exited { .. } => self.exited = Some(message),
                other => {
                    self.out.send(self.id, &other);
                    self.running.mark_started();
                    self.started = true;
                }
            }
        }
    }
}
