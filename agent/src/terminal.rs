//! A command on a pseudo-terminal (`Terminal`): the terminal opened here, its slave side
//! the command's stdin, stdout and stderr (the command takes it as its controlling terminal
//! in a session of its own, see `reaper`), its master side read into stdout `Output` frames
//! within the request's reply window and written from `Stdin` frames on a thread of its own,
//! each piece acknowledged by a `Credit` under the host's `acks` id. Once the command has
//! exited, what it left running is killed: a closed terminal leaves nothing behind.

use std::ffi::CStr;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;

use container_isolation_agent::protocol::{Message, Spawn};

use super::detached;
use super::fd_pairs::socket_pair;
use super::frame_out::FrameOut;
use super::launch::{Launch, ReaperFds};
use super::process::{
    agent_path, not_started, read_output, readable, supervise, Registry, Reports, Running,
    NOT_STARTED,
    ROOM_POLL_MS,
};
use super::reaper::fork_reaper;
use super::reaper_report;
use super::reply_window::{Window, Windows};
use super::tree;

fn last_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// A new pseudo-terminal of `cols` × `rows`: its master and slave sides (both close-on-exec).
fn open_pty(cols: u16, rows: u16) -> std::io::Result<(std::fs::File, OwnedFd)> {
    // SAFETY: plain system calls on descriptors owned here.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if master < 0 {
            return Err(last_error());
        }
        let master = std::fs::File::from_raw_fd(master);
        let size = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        if libc::unlockpt(master.as_raw_fd()) != 0
            || libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) != 0
        {
            return Err(last_error());
        }
        let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
        let mut slave = libc::ioctl(master.as_raw_fd(), libc::TIOCGPTPEER, flags);
        if slave < 0 {
            // Kernels before 4.13: by its name under /dev/pts.
            let mut name = [0 as libc::c_char; 128];
            if libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) != 0 {
                return Err(last_error());
            }
            slave = libc::open(CStr::from_ptr(name.as_ptr()).as_ptr(), flags);
            if slave < 0 {
                return Err(last_error());
            }
        }
        Ok((master, OwnedFd::from_raw_fd(slave)))
    }
}

/// Starts `spawn` on a new terminal of `size` (columns, rows) under a reaper; replies
/// `Spawned`, output and `Exited` under `id`, and a `Credit` under `acks` for each piece of
/// input written to the terminal.
pub fn start(
    id: u32,
    spawn: Spawn,
    size: (u16, u16),
    acks: u32,
    out: FrameOut,
    registry: Registry,
    windows: &Windows,
) -> std::io::Result<()> {
    let mut launch = match Launch::new(&spawn) {
        Ok(launch) => launch,
        Err(err) => {
            let program = spawn.argv.first().cloned().unwrap_or_default();
            not_started(id, &out, &program, err);
            let exited = Message::Exited {
                code: NOT_STARTED,
                signal: 0,
            };
            out.send(id, &exited);
            return Ok(());
        }
    };
    launch.terminal = true;
    let (master, slave) = open_pty(size.0, size.1)?;
    // The session's user owns its terminal, as after a login (programs that reopen it by
    // name need that); a failure leaves it root's, still usable through the open side.
    // SAFETY: fchown on a descriptor owned here.
    unsafe { libc::fchown(slave.as_raw_fd(), launch.uid, launch.gid) };
    let (ours, theirs) = socket_pair()?;
    let null = std::fs::File::open("/dev/null")?;
    let fds = ReaperFds {
        channel: theirs.as_raw_fd(),
        stdin: slave.as_raw_fd(),
        stdout: slave.as_raw_fd(),
        stderr: slave.as_raw_fd(),
        null: null.as_raw_fd(),
    };
    let reaper = fork_reaper(&launch, &fds, agent_path()?)?;
    drop((theirs, slave, null));
    let input = feed_terminal(master.try_clone()?, acks, out.clone());
    let running = Arc::new(Running::new(reaper, Some(input), Some(master.try_clone()?)));
    registry.lock().unwrap().insert(id, running.clone());
    let window = windows.open(id);
    let relayed = running.clone();
    supervise(
        id,
        reaper,
        std::fs::File::from(ours),
        &registry,
        windows,
        running,
        move |socket| relay(id, &launch.program, (socket, &master), &window, &out, &relayed),
    )
}

/// Writes what the host sends to the terminal, acknowledging each piece under `acks`.
fn feed_terminal(master: std::fs::File, acks: u32, out: FrameOut) -> Sender<Option<Vec<u8>>> {
    let (sender, receiver) = channel::<Option<Vec<u8>>>();
    let _ = detached::spawn(move || {
        let mut master = master;
        // `None` (the host closing stdin) means nothing on a terminal.
        while let Ok(data) = receiver.recv() {
            let Some(data) = data else { continue };
            if master.write_all(&data).is_err() {
                return;
            }
            let bytes = u32::try_from(data.len()).unwrap_or(u32::MAX);
            out.send(acks, &Message::Credit { bytes });
        }
    });
    sender
}

/// Relays the reaper's reports and the terminal's output. Output is read only while the
/// window has room (else it waits in the terminal, and the program blocks on its writes).
/// When the command exits, its leftovers are killed; the output then ends once every
/// process holding the terminal is gone.
fn relay(
    id: u32,
    program: &str,
    (socket, master): (&mut std::fs::File, &std::fs::File),
    window: &Window,
    out: &FrameOut,
    running: &Running,
) {
    let mut reports = Reports {
        id,
        program,
        out,
        running,
        pending: Vec::new(),
        started: false,
        exited: None,
    };
    let (mut socket_open, mut master_open, mut killed) = (true, true, false);
    let mut records = [0u8; 16 * reaper_report::SIZE];
    // Until the output has ended and the command's end is known (or cannot be: the reaper
    // is gone).
    while master_open || (socket_open && reports.exited.is_none()) {
        let fds = [socket.as_raw_fd(), master.as_raw_fd(), master.as_raw_fd()];
        let ready = master_open && (reports.started || !socket_open) && window.has_room();
        let wait = if ready || !master_open { -1 } else { ROOM_POLL_MS };
        for i in readable(&fds, &[socket_open, ready, false], wait) {
            if i == 0 {
                use std::io::Read;
                match socket.read(&mut records).unwrap_or(0) {
                    0 => socket_open = false,
                    n => reports.push(&records[..n]),
                }
                continue;
            }
            match read_output(id, false, master) {
                None => master_open = false,
                Some(frame) if window.spend_now(frame.len() as u32) => out.send_frame(frame),
                Some(_) => {}
            }
        }
        if reports.exited.is_some() && !killed {
            tree::kill_all(running.reaper);
            killed = true;
        }
    }
    if !killed {
        tree::kill_all(running.reaper);
    }
    let exited = reports.exited.unwrap_or(Message::Exited {
        code: 128 + libc::SIGKILL,
        signal: libc::SIGKILL,
    });
    out.send(id, &exited);
}
