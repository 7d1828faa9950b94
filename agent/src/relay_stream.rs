//! One relayed connection inside the container: a thread that sends what the local socket
//! says as `Data` frames while the host's credit lasts, and the host's `Data` written to
//! the socket — by the line's reader itself when the socket takes it at once and nothing
//! waits before it, else by a writer thread — with credit returned for every byte written.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};

use container_isolation_agent::protocol::{
    data_header, Message, DATA_HEADER, RELAY_CHUNK, RELAY_WINDOW,
};

use super::thread_pool;
use super::frame_out::FrameOut;

/// What the host sends towards the local socket.
pub enum Toward {
    Data(Vec<u8>),
    End,
    Abort,
}

/// A stream as the dispatcher sees it: where the host's frames go.
pub struct StreamEntry {
    pub toward: Sender<Toward>,
    /// `Data` handed to the writer thread and not yet written.
    queued: AtomicUsize,
    credit: Mutex<Credit>,
    granted: Condvar,
    socket: TcpStream,
}

struct Credit {
    bytes: u64,
    aborted: bool,
}

pub type Streams = Arc<Mutex<std::collections::HashMap<u32, Arc<StreamEntry>>>>;

impl StreamEntry {
    /// The host's bytes for the socket: written here as far as the socket takes them without
    /// waiting (when nothing queued is before them), the rest by the writer thread.
    pub fn deliver(&self, id: u32, mut data: Vec<u8>, out: &FrameOut) {
        if self.queued.load(Ordering::Acquire) == 0 {
            let written = send_now(&self.socket, &data);
            if written > 0 {
                out.send(
                    id,
                    &Message::Credit {
                        bytes: written as u32,
                    },
                );
            }
            if written == data.len() {
                return;
            }
            data.drain(..written);
        }
        self.queued.fetch_add(1, Ordering::AcqRel);
        if self.toward.send(Toward::Data(data)).is_err() {
            self.queued.fetch_sub(1, Ordering::AcqRel);
        }
    }

    pub fn credit(&self, bytes: u32) {
        let mut credit = self.credit.lock().unwrap_or_else(|e| e.into_inner());
        credit.bytes = credit.bytes.saturating_add(u64::from(bytes));
        self.granted.notify_all();
    }

    /// Ends both directions at once (the host gave up on the stream).
    pub fn abort(&self) {
        let mut credit = self.credit.lock().unwrap_or_else(|e| e.into_inner());
        credit.aborted = true;
        self.granted.notify_all();
        let _ = self.socket.shutdown(Shutdown::Both);
        let _ = self.toward.send(Toward::Abort);
    }

    /// Waits for credit; how many bytes may be read now, or `None` once aborted.
    fn take_credit(&self) -> Option<usize> {
        let mut credit = self.credit.lock().unwrap_or_else(|e| e.into_inner());
        while credit.bytes == 0 && !credit.aborted {
            credit = self.granted.wait(credit).unwrap_or_else(|e| e.into_inner());
        }
        (!credit.aborted).then(|| credit.bytes.min(RELAY_CHUNK as u64) as usize)
    }

    fn spend(&self, bytes: usize) {
        let mut credit = self.credit.lock().unwrap_or_else(|e| e.into_inner());
        credit.bytes = credit.bytes.saturating_sub(bytes as u64);
    }
}

/// Registers `socket` as stream `id`, sends `announce` (before any of the stream's data),
/// and starts its two threads; they remove it when both directions are done.
pub fn start(
    id: u32,
    socket: TcpStream,
    out: FrameOut,
    streams: Streams,
    announce: Option<Message>,
) -> std::io::Result<()> {
    let _ = socket.set_nodelay(true);
    let (toward, receiver) = channel();
    let entry = Arc::new(StreamEntry {
        toward,
        queued: AtomicUsize::new(0),
        credit: Mutex::new(Credit {
            bytes: u64::from(RELAY_WINDOW),
            aborted: false,
        }),
        granted: Condvar::new(),
        socket: socket.try_clone()?,
    });
    let writer_socket = socket.try_clone()?;
    streams
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, entry.clone());
    if let Some(message) = announce {
        out.send(id, &message);
    }
    let done = Arc::new(Mutex::new(0u8));
    let finish = move |streams: &Streams, done: &Mutex<u8>| {
        let mut count = done.lock().unwrap_or_else(|e| e.into_inner());
        *count += 1;
        if *count == 2 {
            streams
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
        }
    };
    let (out2, streams2, done2, entry2) =
        (out.clone(), streams.clone(), done.clone(), entry.clone());
    let forget = |streams: &Streams| {
        streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    };
    // At a full pids limit no thread may be had: the stream is refused, never a panic.
    let streams3 = streams.clone();
    thread_pool::run(move || {
        read_side(id, socket, &entry2, &out2);
        finish(&streams2, &done2);
    })
    .inspect_err(|_| forget(&streams3))?;
    let streams3 = streams.clone();
    let entry3 = entry.clone();
    thread_pool::run(move || {
        write_side(id, writer_socket, receiver, &out, &entry3.queued);
        finish(&streams, &done);
    })
    .inspect_err(|_| {
        entry.abort();
        forget(&streams3);
    })?;
    Ok(())
}

fn read_side(id: u32, mut socket: TcpStream, entry: &StreamEntry, out: &FrameOut) {
    while let Some(room) = entry.take_credit() {
        // Read straight into the frame that carries it.
        let mut frame = vec![0u8; DATA_HEADER + room];
        match socket.read(&mut frame[DATA_HEADER..]) {
            Ok(0) => return out.send(id, &Message::End),
            Ok(n) => {
                entry.spend(n);
                frame.truncate(DATA_HEADER + n);
                frame[..DATA_HEADER].copy_from_slice(&data_header(id, n));
                out.send_frame(frame);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    out.send(id, &Message::Abort);
}

fn write_side(
    id: u32,
    mut socket: TcpStream,
    receiver: Receiver<Toward>,
    out: &FrameOut,
    queued: &AtomicUsize,
) {
    while let Ok(next) = receiver.recv() {
        match next {
            Toward::Data(data) => {
                let written = socket.write_all(&data);
                queued.fetch_sub(1, Ordering::AcqRel);
                if written.is_err() {
                    let _ = socket.shutdown(Shutdown::Both);
                    return out.send(id, &Message::Abort);
                }
                out.send(
                    id,
                    &Message::Credit {
                        bytes: data.len() as u32,
                    },
                );
            }
            Toward::End => {
                let _ = socket.shutdown(Shutdown::Write);
                return;
            }
            Toward::Abort => {
                let _ = socket.shutdown(Shutdown::Both);
                return;
            }
        }
    }
}

/// How much of `data` the socket takes now without waiting (0 when it would block or
/// failed: the writer thread then meets the error itself).
fn send_now(socket: &TcpStream, data: &[u8]) -> usize {
    let mut sent = 0;
    while sent < data.len() {
        let rest = &data[sent..];
        // SAFETY: `rest` is a live slice of `rest.len()` bytes; the fd is the socket's own.
        let n = unsafe {
            libc::send(
                socket.as_raw_fd(),
                rest.as_ptr().cast(),
                rest.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        match n {
            n if n > 0 => sent += n as usize,
            -1 if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => break,
        }
    }
    sent
}
