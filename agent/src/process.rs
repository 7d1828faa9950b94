//! A command started for the host: its reaper (forked, with a socket to us), output pipes
//! read into `Output` frames, stdin fed from `Stdin` frames on a thread of its own (a
//! command that does not read cannot stall the agent), and `Exited` sent once the command
//! has exited and its output has ended.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, OnceLock};

use container_isolation_agent::protocol::{output_header, Message, Spawn, CHUNK, OUTPUT_HEADER};

use super::detached;
use super::fd_pairs::{pipe, socket_pair};
use super::frame_out::FrameOut;
use super::launch::{Launch, ReaperFds};
use super::reaper::fork_reaper;
use super::reaper_report::{self, Report};
use super::reply_window::{Window, Windows};
pub use super::running::{supervise, Registry, Running};

/// Exit code of a command that could not be started (as the engine reports it).
pub const NOT_STARTED: i32 = 126;

/// This binary's path, for a reaper that must exec `reaper-kill`.
pub fn agent_path() -> std::io::Result<&'static CString> {
    static PATH: OnceLock<CString> = OnceLock::new();
    if let Some(path) = PATH.get() {
        return Ok(path);
    }
    let exe = std::env::current_exe()?;
    let path = CString::new(exe.into_os_string().into_vec())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    Ok(PATH.get_or_init(|| path))
}

/// How long the output waits, at most, between looks at a full reply window.
pub const ROOM_POLL_MS: i32 = 100;

/// Starts `spawn` under a reaper; replies `Spawned`, output (within the request's reply
/// window), and `Exited` under `id`.
pub fn start(
    id: u32,
    spawn: Spawn,
    out: FrameOut,
    registry: Registry,
    windows: &Windows,
) -> std::io::Result<()> {
    let launch = match Launch::new(&spawn) {
        Ok(launch) => launch,
        Err(err) => {
            not_started(
                id,
                &out,
                &spawn.argv.first().cloned().unwrap_or_default(),
                err,
            );
            out.send(
                id,
                &Message::Exited {
                    code: NOT_STARTED,
                    signal: 0,
                },
            );
            return Ok(());
        }
    };
    let (ours, theirs) = socket_pair()?;
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let null = std::fs::File::open("/dev/null")?;
    let (stdin_read, stdin_write) = match spawn.stdin {
        true => {
            let (read, write) = pipe()?;
            (Some(read), Some(write))
        }
        false => (None, None),
    };
    let fds = ReaperFds {
        channel: theirs.as_raw_fd(),
        stdin: stdin_read
            .as_ref()
            .map_or(null.as_raw_fd(), |r| r.as_raw_fd()),
        stdout: out_write.as_raw_fd(),
        stderr: err_write.as_raw_fd(),
        null: null.as_raw_fd(),
    };
    let reaper = fork_reaper(&launch, &fds, agent_path()?)?;
    drop((theirs, out_write, err_write, null, stdin_read));
    let running = Arc::new(Running::new(reaper, stdin_write.map(feed_stdin), None));
    registry.lock().unwrap().insert(id, running.clone());
    let outputs = [std::fs::File::from(out_read), std::fs::File::from(err_read)];
    let window = windows.open(id);
    let relayed = running.clone();
    supervise(
        id,
        reaper,
        std::fs::File::from(ours),
        &registry,
        windows,
        running,
        move |socket| {
            let ends = Ends {
                socket,
                outputs,
                window: &window,
            };
            coordinate(id, &launch.program, ends, &out, &relayed);
        },
    )
}

/// A command that could not be started: `Spawned` (pid 0) and the reason on stderr; its
/// `Exited` (code `NOT_STARTED`) is the caller's to send.
pub fn not_started(id: u32, out: &FrameOut, program: &str, err: std::io::Error) {
    out.send(id, &Message::Spawned { pid: 0 });
    out.send(
        id,
        &Message::Output {
            stderr: true,
            data: format!("exec {program:?}: {err}\n").into_bytes(),
        },
    );
}

/// Writes what the host sends to the command's stdin; `None` closes it.
fn feed_stdin(write: OwnedFd) -> Sender<Option<Vec<u8>>> {
    let (sender, receiver) = channel::<Option<Vec<u8>>>();
    // Without a thread the pipe's write end is dropped: the command sees its stdin end.
    let _ = detached::spawn(move || {
        let mut pipe = std::fs::File::from(write);
        while let Ok(Some(data)) = receiver.recv() {
            if pipe.write_all(&data).is_err() {
                return;
            }
        }
    });
    sender
}

/// What `coordinate` reads: the reaper's socket, the command's stdout and stderr, and the
/// room the host has granted for the output.
struct Ends<'a> {
    socket: &'a mut std::fs::File,
    outputs: [std::fs::File; 2],
    window: &'a Window,
}

/// Relays the reaper's reports and the command's output until both have ended. Output is
/// read only while the request's window has room (else it waits in its pipe); once the host
/// has closed the window it is read and dropped.
fn coordinate(id: u32, program: &str, ends: Ends<'_>, out: &FrameOut, running: &Running) {
    let Ends {
        socket,
        outputs,
        window,
    } = ends;
    let mut reports = Reports {
        id,
        program,
        out,
        running,
        pending: Vec::new(),
        started: false,
        exited: None,
    };
    let mut open = [true, true, true];
    let mut records = [0u8; 16 * reaper_report::SIZE];
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
        let ready = (reports.started || !open[0]) && window.has_room();
        let watched = [open[0], open[1] && ready, open[2] && ready];
        let wait = if ready || !open[1] && !open[2] {
            -1
        } else {
            ROOM_POLL_MS
        };
        for i in readable(&fds, &watched, wait) {
            if i == 0 {
                match socket.read(&mut records).unwrap_or(0) {
                    0 => open[0] = false,
                    n => reports.push(&records[..n]),
                }
                continue;
            }
            match read_output(id, i == 2, &outputs[i - 1]) {
                None => open[i] = false,
                Some(frame) if window.spend_now((frame.len() - OUTPUT_HEADER) as u32) => {
                    out.send_frame(frame)
                }
                Some(_) => {}
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

/// The next piece of a command's output, read straight into the `Output` frame that carries
/// it (no zeroing, no copy); `None` at its end.
pub fn read_output(id: u32, stderr: bool, pipe: &std::fs::File) -> Option<Vec<u8>> {
    let mut frame: Vec<u8> = Vec::with_capacity(OUTPUT_HEADER + CHUNK);
    let n = loop {
        // SAFETY: reads at most CHUNK bytes into the frame's spare room past its header.
        let n = unsafe {
            let room = frame.as_mut_ptr().add(OUTPUT_HEADER);
            libc::read(pipe.as_raw_fd(), room.cast(), CHUNK)
        };
        let interrupted = std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
        if n >= 0 || !interrupted {
            break n;
        }
    };
    let n = usize::try_from(n).ok().filter(|n| *n > 0)?;
    frame.extend_from_slice(&output_header(id, stderr, n));
    // SAFETY: the header is in place and `read` filled the n bytes after it.
    unsafe { frame.set_len(OUTPUT_HEADER + n) };
    Some(frame)
}

/// Which of the open `fds` can be read (or have ended) now; waits until one can, or
/// `wait_ms` (-1: no limit).
pub fn readable(fds: &[i32; 3], open: &[bool; 3], wait_ms: i32) -> Vec<usize> {
    let mut polls: Vec<libc::pollfd> = (0..3)
        .filter(|&i| open[i])
        .map(|i| libc::pollfd {
            fd: fds[i],
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: polls is a valid array of pollfd.
    if unsafe { libc::poll(polls.as_mut_ptr(), polls.len() as libc::nfds_t, wait_ms) } < 0 {
        return Vec::new();
    }
    polls
        .iter()
        .filter(|p| p.revents != 0)
        .filter_map(|p| fds.iter().position(|fd| *fd == p.fd))
        .collect()
}

/// What the reaper says about the command: started (`Spawned`), could not start (told to
/// the host as a command that exits `NOT_STARTED`), exited.
pub struct Reports<'a> {
    pub id: u32,
    pub program: &'a str,
    pub out: &'a FrameOut,
    pub running: &'a Running,
    /// Bytes of a record not yet complete.
    pub pending: Vec<u8>,
    pub started: bool,
    pub exited: Option<Message>,
}

impl Reports<'_> {
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        while self.pending.len() >= reaper_report::SIZE {
            let record: [u8; reaper_report::SIZE] =
                self.pending[..reaper_report::SIZE].try_into().unwrap();
            self.pending.drain(..reaper_report::SIZE);
            match Report::parse(&record) {
                Some(Report::Spawned { pid }) => self.mark_started(pid as u32),
                Some(Report::Failed { errno }) => {
                    let err = std::io::Error::from_raw_os_error(errno);
                    not_started(self.id, self.out, self.program, err);
                    self.mark_started(0);
                    self.exited = Some(Message::Exited {
                        code: NOT_STARTED,
                        signal: 0,
                    });
                }
                Some(Report::Exited { status }) => self.exited = Some(exit_message(status)),
                None => {}
            }
        }
    }

    fn mark_started(&mut self, pid: u32) {
        if pid != 0 {
            self.out.send(self.id, &Message::Spawned { pid });
        }
        self.running.mark_started();
        self.started = true;
    }
}

/// `Exited` for a `waitpid` status: the exit code, or 128 + the signal that ended it.
fn exit_message(status: libc::c_int) -> Message {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        Message::Exited {
            code: 128 + signal,
            signal,
        }
    } else {
        Message::Exited {
            code: libc::WEXITSTATUS(status),
            signal: 0,
        }
    }
}
