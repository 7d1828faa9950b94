//! The agent's end of the direct line: when the host asks (`Line`), it connects to the unix
//! socket the host listens on, in the host's folder mounted read-only into the container,
//! presents the host's token (`Join`) and waits for the host's `Done` on that socket; then
//! (`take`) it answers `Done` as its last frame on stdout, sends every later frame over the
//! line, reads the host's from there, and keeps stdin only as the lifeline. Both `agent
//! serve` and `agent relay` take the line this way.
//!
//! The entry is opened without following a symlink and must be a socket; the connection
//! goes through that very inode (`/proc/self/fd/N`), so what is checked is what is reached.
//! Whatever answers is the host only if it says `Done` under the request's id: a listener
//! of the container's own making, reached through a swapped entry, never does. Every wait is
//! bounded, so a stalled listener cannot hold the agent.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use container_isolation_agent::protocol::{encode, FrameBuffer, Message};

use super::detached;
use super::files::{errno, failed, quoted};
use super::frame_out::FrameOut;

/// How long a connect may wait (a listener whose backlog is full blocks it).
const CONNECT_WAIT: Duration = Duration::from_secs(2);
/// How long the host may take to accept the line once the token is sent.
const VERDICT_WAIT: Duration = Duration::from_secs(5);

/// Why the line could not be taken; the `Failed` answer to `Line`.
pub struct Refusal {
    errno: i32,
    why: String,
}

impl Refusal {
    pub fn answer(self) -> Message {
        Message::Failed {
            errno: self.errno,
            message: self.why,
        }
    }
}

fn refused(errno: i32, why: String) -> Refusal {
    Refusal { errno, why }
}

fn os_error(what: &str, path: &str, err: std::io::Error) -> Refusal {
    refused(
        err.raw_os_error().unwrap_or(libc::EIO),
        format!("{what} '{}': {err}", quoted(path)),
    )
}

/// Answers the host's `Line` offer (request `id`): joins the line at `path` with `token`,
/// answers `Done` on stdout and moves `out` to the line, and returns the line to read the
/// host's frames from; else answers why not, and stdin and stdout stay in use. Nothing is
/// read from stdin after a switch but its end, which then shuts the line.
pub fn take(id: u32, path: &str, token: &[u8], out: &FrameOut) -> Option<UnixStream> {
    let joined = match join(id, path, token) {
        Ok(stream) => match (stream.try_clone(), stream.try_clone()) {
            (Ok(output), Ok(lifeline)) => Some((stream, output, lifeline)),
            (Err(e), _) | (_, Err(e)) => {
                out.send(id, &failed(&e, path));
                None
            }
        },
        Err(refusal) => {
            out.send(id, &refusal.answer());
            None
        }
    };
    let (stream, output, lifeline) = joined?;
    if detached::spawn(move || watch_stdin(lifeline)).is_err() {
        out.send(id, &failed(&errno(libc::EAGAIN), "a thread for the line"));
        return None;
    }
    out.send(id, &Message::Done);
    out.switch(output);
    Some(stream)
}

/// Stdin after the switch: nothing more is read from it but its end, which means the host
/// is gone; the line is then shut so that the reading loop ends as it would have.
fn watch_stdin(line: UnixStream) {
    let mut stdin = std::io::stdin();
    let mut buf = [0u8; 4096];
    loop {
        match stdin.read(&mut buf) {
            Ok(0) => break,
            Err(e) if e.kind() != std::io::ErrorKind::Interrupted => break,
            _ => {}
        }
    }
    let _ = line.shutdown(std::net::Shutdown::Both);
}

/// Connects to the host's socket at `path` and has the host accept it under request `id`.
fn join(id: u32, path: &str, token: &[u8]) -> Result<UnixStream, Refusal> {
    let entry = open_entry(path)?;
    let stream = connect_through(&entry, path)?;
    drop(entry);
    let verdict = present(id, token, &stream);
    verdict.map_err(|why| refused(libc::EPROTO, why))?;
    for timeout in [libc::SO_SNDTIMEO, libc::SO_RCVTIMEO] {
        set_timeout(&stream, timeout, None).map_err(|e| os_error("the line at", path, e))?;
    }
    Ok(stream)
}

/// The entry at `path`, not followed, checked to be a socket.
fn open_entry(path: &str) -> Result<OwnedFd, Refusal> {
    let name = CString::new(path).map_err(|_| refused(libc::EINVAL, "a NUL in the path".into()))?;
    let flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated path; the fd is owned once.
    let fd = unsafe { libc::open(name.as_ptr(), flags) };
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        return Err(os_error("no entry for the line at", path, err));
    }
    let entry = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: a zeroed stat is valid storage for fstat to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(entry.as_raw_fd(), &mut st) } != 0 {
        let err = std::io::Error::last_os_error();
        return Err(os_error("the line's entry", path, err));
    }
    let kind = match st.st_mode & libc::S_IFMT {
        libc::S_IFSOCK => return Ok(entry),
        libc::S_IFLNK => "a symlink",
        libc::S_IFREG => "a plain file",
        libc::S_IFDIR => "a directory",
        libc::S_IFIFO => "a fifo",
        _ => "a device",
    };
    let errno = match kind {
        "a symlink" => libc::ELOOP,
        _ => libc::ENOTSOCK,
    };
    Err(refused(
        errno,
        format!(
            "the line's entry '{}' is {kind}, not a socket",
            quoted(path)
        ),
    ))
}

/// A stream socket connected to the socket `entry` is.
fn connect_through(entry: &OwnedFd, path: &str) -> Result<UnixStream, Refusal> {
    // SAFETY: plain socket creation; the fd is owned once.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(os_error("a socket for", path, std::io::Error::last_os_error()));
    }
    let stream = unsafe { UnixStream::from_raw_fd(fd) };
    set_timeout(&stream, libc::SO_SNDTIMEO, Some(CONNECT_WAIT))
        .and_then(|_| set_timeout(&stream, libc::SO_RCVTIMEO, Some(VERDICT_WAIT)))
        .map_err(|e| os_error("a socket for", path, e))?;
    let through = format!("/proc/self/fd/{}", entry.as_raw_fd());
    // SAFETY: a zeroed sockaddr_un is valid; the path is shorter than sun_path.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (slot, byte) in address.sun_path.iter_mut().zip(through.bytes()) {
        *slot = byte as libc::c_char;
    }
    let length = std::mem::size_of::<libc::sa_family_t>() + through.len() + 1;
    let connected = unsafe {
        libc::connect(
            stream.as_raw_fd(),
            &address as *const libc::sockaddr_un as *const libc::sockaddr,
            length as libc::socklen_t,
        )
    };
    if connected != 0 {
        let err = std::io::Error::last_os_error();
        return Err(os_error("no connection to the line at", path, err));
    }
    Ok(stream)
}

/// Sends the token and reads the host's verdict: `Ok` for `Done` under `id`.
fn present(id: u32, token: &[u8], mut stream: &UnixStream) -> Result<(), String> {
    let join = encode(
        id,
        &Message::Join {
            token: token.to_vec(),
        },
    );
    stream
        .write_all(&join)
        .map_err(|e| format!("the token could not be sent: {e}"))?;
    let mut frames = FrameBuffer::default();
    let mut buf = [0u8; 256];
    loop {
        if let Some(frame) = frames.next_frame() {
            return match frame {
                Ok((got, Message::Done)) if got == id => Ok(()),
                Ok((_, other)) => Err(format!(
                    "what listens there is not the host: it answered {}",
                    quoted(&format!("{other:?}"))
                )),
                Err(e) => Err(format!("what listens there is not the host: {e}")),
            };
        }
        match stream.read(&mut buf) {
            Ok(0) => return Err("the listener closed the line without accepting it".into()),
            Ok(n) => frames.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(format!(
                    "the listener said nothing within {} s (it is not the host's)",
                    VERDICT_WAIT.as_secs()
                ))
            }
            Err(e) => return Err(format!("the line failed: {e}")),
        }
    }
}

fn set_timeout(
    stream: &UnixStream,
    option: libc::c_int,
    wait: Option<Duration>,
) -> std::io::Result<()> {
    let wait = wait.unwrap_or_default();
    let value = libc::timeval {
        tv_sec: wait.as_secs() as libc::time_t,
        tv_usec: wait.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: a timeval of the size given.
    let set = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            option,
            &value as *const libc::timeval as *const libc::c_void,
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    match set {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}
