//! `agent relay PORT...`: the session's only way to the network. Listens on the
//! container's loopback on each PORT (the host decides what each listener speaks) and
//! carries every accepted connection, and every connection the host dials into the
//! container (a forwarded port), as a stream over framed stdin/stdout, or over the direct
//! line once the host offers it (`Line`, taken as `agent serve` takes it; stdin then stays
//! as the lifeline). It decides nothing: the host reads each stream, applies the policy and
//! makes the connection itself.
//!
//! A relay started later for the same container (another host process) replaces this one:
//! the pid file names the running relay, which the new one ends before it listens.

use std::collections::HashMap;
use std::io::Read;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use container_isolation_agent::protocol::{
    agreed_version,
    FrameBuffer, Message, AGENT_STREAM, CONTROL, RELAY_CHUNK, RELAY_WINDOW,
};

use super::detached;
use super::frame_out::FrameOut;
use super::line;
use super::relay_stream::{self, Streams, Toward};
use super::thread_pool;

/// Where the running relay's pid is kept, first writable wins.
const PID_FILES: [&str; 2] = [
    "/run/.container-isolation-relay.pid",
    "/tmp/.container-isolation-relay.pid",
];
const AGENT_NAME: &[u8] = b"container-isolation-agent";
/// Streams open at once, at most; the host enforces its own, lower bound.
const MAX_STREAMS: usize = 4096;
/// How long a port held by a relay being replaced is tried again.
const BIND_WAIT: Duration = Duration::from_secs(3);

pub fn run(args: &[String]) -> i32 {
    let ports: Result<Vec<u16>, _> = args.iter().map(|a| a.parse::<u16>()).collect();
    let Ok(ports) = ports else {
        eprintln!("container-isolation-agent relay: ports must be numbers");
        return 2;
    };
    replace_running_relay();
    let mut listeners = Vec::new();
    for port in &ports {
        match bind(*port) {
            Ok(listener) => listeners.push(listener),
            Err(e) => {
                eprintln!("container-isolation-agent relay: 127.0.0.1:{port}: {e}");
                return 1;
            }
        }
    }
    record_pid();
    let out = FrameOut::direct();
    let streams: Streams = Arc::new(Mutex::new(HashMap::new()));
    let next = Arc::new(AtomicU32::new(0));
    for (index, listener) in listeners.into_iter().enumerate() {
        let (out, streams, next) = (out.clone(), streams.clone(), next.clone());
        if let Err(e) =
            detached::spawn(move || accept_loop(index as u8, listener, &out, &streams, &next))
        {
            eprintln!("container-isolation-agent relay: no thread for listener {index}: {e}");
            return 1;
        }
    }
    let code = serve(&out, &streams);
    for entry in streams.lock().unwrap_or_else(|e| e.into_inner()).values() {
        entry.abort();
    }
    code
}

fn bind(port: u16) -> std::io::Result<TcpListener> {
    let started = Instant::now();
    loop {
        match TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))) {
            Err(e)
                if e.kind() == std::io::ErrorKind::AddrInUse && started.elapsed() < BIND_WAIT =>
            {
                std::thread::sleep(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}

fn accept_loop(
    index: u8,
    listener: TcpListener,
    out: &FrameOut,
    streams: &Streams,
    next: &AtomicU32,
) {
    for socket in listener.incoming() {
        let Ok(socket) = socket else { continue };
        if streams.lock().unwrap_or_else(|e| e.into_inner()).len() >= MAX_STREAMS {
            continue;
        }
        let id = AGENT_STREAM | (next.fetch_add(1, Ordering::Relaxed) & !AGENT_STREAM);
        let accepted = Message::Accepted { listener: index };
        let _ = relay_stream::start(id, socket, out.clone(), streams.clone(), Some(accepted));
    }
}

/// Reads the host's frames until stdin ends (or the line, once taken).
fn serve(out: &FrameOut, streams: &Streams) -> i32 {
    let mut frames = FrameBuffer::default();
    let mut buf = vec![0u8; 4 * RELAY_CHUNK];
    let mut input: Box<dyn Read> = Box::new(std::io::stdin());
    loop {
        match input.read(&mut buf) {
            Ok(0) => return 0,
            Ok(n) => frames.push(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return 1,
        }
        while let Some(frame) = frames.next_frame() {
            match frame {
                Ok((id, Message::Line { path, token })) => {
                    if let Some(line) = line::take(id, &path, &token, out) {
                        input = Box::new(line);
                    }
                }
                Ok((id, message)) => dispatch(id, message, out, streams),
                Err(e) => {
                    eprintln!("container-isolation-agent relay: {e}");
                    return 3;
                }
            }
        }
    }
}

fn dispatch(id: u32, message: Message, out: &FrameOut, streams: &Streams) {
    let entry = || {
        streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned()
    };
    match message {
        Message::Hello { version } => out.send(
            CONTROL,
            &Message::Welcome {
                version: agreed_version(version),
                pid: std::process::id(),
            },
        ),
        Message::Data(data) => {
            if let Some(entry) = entry() {
                entry.deliver(id, data, out);
            }
        }
        Message::End => {
            if let Some(entry) = entry() {
                let _ = entry.toward.send(Toward::End);
            }
        }
        Message::Abort => {
            if let Some(entry) = entry() {
                entry.abort();
            }
        }
        Message::Credit { bytes } => {
            if let Some(entry) = entry() {
                entry.credit(bytes.min(RELAY_WINDOW));
            }
        }
        Message::Dial { port } if id & AGENT_STREAM == 0 => {
            let (theirs, streams) = (out.clone(), streams.clone());
            if let Err(e) = thread_pool::run(move || dial(id, port, &theirs, streams)) {
                out.send(
                    id,
                    &Message::Failed {
                        errno: e.raw_os_error().unwrap_or(libc::EAGAIN),
                        message: format!("no thread for the connection: {e}"),
                    },
                );
            }
        }
        _ => out.send(
            id,
            &Message::Failed {
                errno: libc::EINVAL,
                message: "not a relay message".into(),
            },
        ),
    }
}

fn dial(id: u32, port: u16, out: &FrameOut, streams: Streams) {
    let target = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let reply = match TcpStream::connect_timeout(&target, Duration::from_secs(5)) {
        Ok(socket) => {
            match relay_stream::start(id, socket, out.clone(), streams, Some(Message::Done)) {
                Ok(()) => return,
                Err(e) => failure(&e, port),
            }
        }
        Err(e) => failure(&e, port),
    };
    out.send(id, &reply);
}

fn failure(e: &std::io::Error, port: u16) -> Message {
    Message::Failed {
        errno: e.raw_os_error().unwrap_or(libc::EIO),
        message: format!("127.0.0.1:{port} in the container: {e}"),
    }
}

/// Ends the relay a pid file names, if that process is a relay of ours.
fn replace_running_relay() {
    let own_path = std::env::args_os()
        .next()
        .map(|a| std::os::unix::ffi::OsStrExt::as_bytes(a.as_os_str()).to_vec());
    for file in PID_FILES {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let Ok(pid) = text.trim().parse::<i32>() else {
            continue;
        };
        if pid <= 1 || pid == std::process::id() as i32 {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let mut args = cmdline.split(|b| *b == 0);
        // Named so where the engines mount it; a Pod's delivered copy goes by our own path.
        let ours = args.next().is_some_and(|a| {
            a.windows(AGENT_NAME.len()).any(|w| w == AGENT_NAME) || own_path.as_deref() == Some(a)
        });
        let is_relay = ours && args.next() == Some(b"relay".as_slice());
        if is_relay {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe { libc::kill(pid, libc::SIGTERM) };
        }
    }
}

fn record_pid() {
    for file in PID_FILES {
        if std::fs::write(file, format!("{}\n", std::process::id())).is_ok() {
            return;
        }
    }
}
