//! One relay stream on this side, as the code that handles the connection sees it: an
//! `AsyncRead + AsyncWrite` that reads the agent's `Data` for it as the channel's reader
//! hands it over (credit returned as each piece is consumed) and puts what is written into
//! `Data` frames on the channel's outgoing queue while the agent's credit lasts — no pipe
//! and no task between the connection's code and the channel. Shut down, it sends `End`;
//! dropped before both directions ended, failed, aborted or idle past its bound, it tells
//! the agent `Abort`.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use container_isolation_agent::protocol::{
    data_header, encode, Message, DATA_HEADER, RELAY_CHUNK, RELAY_WINDOW,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::PollSender;

/// What the agent sent for a stream.
pub enum Inbound {
    Data(Vec<u8>),
    End,
    Abort,
}

/// A stream's state shared with the channel's reader: how many bytes the agent lets this
/// side send, and how many of the agent's are received and not yet consumed.
pub struct StreamShared {
    credit: Mutex<u64>,
    writer: Mutex<Option<Waker>>,
    aborted: AtomicBool,
    pub pending: AtomicUsize,
}

impl StreamShared {
    pub fn new() -> StreamShared {
        StreamShared {
            credit: Mutex::new(u64::from(RELAY_WINDOW)),
            writer: Mutex::new(None),
            aborted: AtomicBool::new(false),
            pending: AtomicUsize::new(0),
        }
    }

    /// Adds credit, never beyond twice the window (an agent that sends more gains nothing).
    pub fn grant(&self, bytes: u32) {
        let mut have = self.credit.lock().unwrap_or_else(|e| e.into_inner());
        *have = (*have + u64::from(bytes)).min(2 * u64::from(RELAY_WINDOW));
        drop(have);
        self.wake_writer();
    }

    /// The stream is over: a writer waiting for credit fails.
    pub fn abort(&self) {
        self.aborted.store(true, Ordering::Release);
        self.wake_writer();
    }

    fn wake_writer(&self) {
        if let Some(waker) = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take() {
            waker.wake();
        }
    }

    /// How many bytes may be sent now (at most a chunk), once there is credit.
    fn poll_credit(&self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        for _ in 0..2 {
            if self.aborted.load(Ordering::Acquire) {
                return Poll::Ready(Err(io::ErrorKind::ConnectionReset.into()));
            }
            let have = *self.credit.lock().unwrap_or_else(|e| e.into_inner());
            if have > 0 {
                return Poll::Ready(Ok(have.min(RELAY_CHUNK as u64) as usize));
            }
            // Registered, then looked at again: a grant in between is not missed.
            *self.writer.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    fn spend(&self, bytes: usize) {
        let mut have = self.credit.lock().unwrap_or_else(|e| e.into_inner());
        *have = have.saturating_sub(bytes as u64);
    }
}

/// The stream's parts, from the channel that opened it.
pub struct StreamParts {
    pub id: u32,
    pub inbound: mpsc::UnboundedReceiver<Inbound>,
    pub shared: std::sync::Arc<StreamShared>,
    pub outgoing: mpsc::Sender<Vec<u8>>,
    pub idle: Duration,
    /// Called once when the stream is dropped (the channel forgets its slot).
    pub forget: Box<dyn FnOnce() + Send + Sync>,
}

pub struct RelayStream {
    id: u32,
    inbound: mpsc::UnboundedReceiver<Inbound>,
    shared: std::sync::Arc<StreamShared>,
    /// The piece being read, and how much of it is read.
    piece: Vec<u8>,
    read: usize,
    /// Bytes consumed whose credit the agent has not been sent yet.
    owed: u32,
    /// Credits go on one sender and data on another, so that a reader and a writer polled
    /// by different tasks each keep their own wake-up.
    credits: PollSender<Vec<u8>>,
    data: PollSender<Vec<u8>>,
    outgoing: mpsc::Sender<Vec<u8>>,
    read_ended: bool,
    wrote_end: bool,
    failed: bool,
    idle: Duration,
    deadline: Pin<Box<Sleep>>,
    forget: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl RelayStream {
    pub fn new(parts: StreamParts) -> RelayStream {
        RelayStream {
            id: parts.id,
            inbound: parts.inbound,
            shared: parts.shared,
            piece: Vec::new(),
            read: 0,
            owed: 0,
            credits: PollSender::new(parts.outgoing.clone()),
            data: PollSender::new(parts.outgoing.clone()),
            outgoing: parts.outgoing,
            read_ended: false,
            wrote_end: false,
            failed: false,
            idle: parts.idle,
            deadline: Box::pin(tokio::time::sleep(parts.idle)),
            forget: Some(parts.forget),
        }
    }

    fn touch(&mut self) {
        let at = Instant::now() + self.idle;
        self.deadline.as_mut().reset(at);
    }

    fn fail(&mut self, kind: io::ErrorKind) -> io::Error {
        self.failed = true;
        kind.into()
    }

    /// Idle past the bound: failed (`Pending` otherwise, the timer registered).
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        match self.deadline.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(self.fail(io::ErrorKind::TimedOut)),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Sends the credit owed, if the queue has room now (else the reader is woken for it).
    fn poll_return_credit(&mut self, cx: &mut Context<'_>) {
        if self.owed == 0 {
            return;
        }
        if let Poll::Ready(Ok(())) = self.credits.poll_reserve(cx) {
            let credit = Message::Credit { bytes: self.owed };
            if self.credits.send_item(encode(self.id, &credit)).is_ok() {
                self.owed = 0;
            }
        }
    }
}

impl AsyncRead for RelayStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.failed {
                return Poll::Ready(Err(io::ErrorKind::ConnectionReset.into()));
            }
            if this.read < this.piece.len() {
                let n = buf.remaining().min(this.piece.len() - this.read);
                buf.put_slice(&this.piece[this.read..this.read + n]);
                this.read += n;
                if this.read == this.piece.len() {
                    let len = std::mem::take(&mut this.piece).len();
                    this.read = 0;
                    this.shared.pending.fetch_sub(len, Ordering::AcqRel);
                    this.owed = this.owed.saturating_add(len as u32);
                    this.poll_return_credit(cx);
                }
                this.touch();
                return Poll::Ready(Ok(()));
            }
            if this.read_ended {
                return Poll::Ready(Ok(()));
            }
            this.poll_return_credit(cx);
            match this.inbound.poll_recv(cx) {
                Poll::Ready(Some(Inbound::Data(data))) => {
                    if data.is_empty() {
                        continue;
                    }
                    this.piece = data;
                }
                Poll::Ready(Some(Inbound::End)) => {
                    this.read_ended = true;
                    this.touch();
                    return Poll::Ready(Ok(()));
                }
                Poll::Ready(Some(Inbound::Abort)) | Poll::Ready(None) => {
                    return Poll::Ready(Err(this.fail(io::ErrorKind::ConnectionReset)));
                }
                Poll::Pending => {
                    return match this.poll_idle(cx) {
                        Poll::Ready(e) => Poll::Ready(Err(e)),
                        Poll::Pending => Poll::Pending,
                    };
                }
            }
        }
    }
}

impl AsyncWrite for RelayStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if this.failed || this.wrote_end {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let room = match this.shared.poll_credit(cx) {
            Poll::Ready(Ok(room)) => room,
            Poll::Ready(Err(e)) => {
                this.failed = true;
                return Poll::Ready(Err(e));
            }
            Poll::Pending => {
                return match this.poll_idle(cx) {
                    Poll::Ready(e) => Poll::Ready(Err(e)),
                    Poll::Pending => Poll::Pending,
                };
            }
        };
        match this.data.poll_reserve(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(_)) => return Poll::Ready(Err(this.fail(io::ErrorKind::BrokenPipe))),
            Poll::Pending => return Poll::Pending,
        }
        let n = buf.len().min(room);
        let mut frame = Vec::with_capacity(DATA_HEADER + n);
        frame.extend_from_slice(&data_header(this.id, n));
        frame.extend_from_slice(&buf[..n]);
        this.shared.spend(n);
        if this.data.send_item(frame).is_err() {
            return Poll::Ready(Err(this.fail(io::ErrorKind::BrokenPipe)));
        }
        this.touch();
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.wrote_end || this.failed {
            return Poll::Ready(Ok(()));
        }
        match this.data.poll_reserve(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(_)) => return Poll::Ready(Err(this.fail(io::ErrorKind::BrokenPipe))),
            Poll::Pending => return Poll::Pending,
        }
        if this.data.send_item(encode(this.id, &Message::End)).is_err() {
            return Poll::Ready(Err(this.fail(io::ErrorKind::BrokenPipe)));
        }
        this.wrote_end = true;
        Poll::Ready(Ok(()))
    }
}

impl Drop for RelayStream {
    fn drop(&mut self) {
        if self.failed || !(self.read_ended && self.wrote_end) {
            let abort = encode(self.id, &Message::Abort);
            if let Err(mpsc::error::TrySendError::Full(abort)) = self.outgoing.try_send(abort) {
                let outgoing = self.outgoing.clone();
                if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                    runtime.spawn(async move { outgoing.send(abort).await });
                }
            }
        }
        if let Some(forget) = self.forget.take() {
            forget();
        }
    }
}

#[cfg(test)]
#[path = "relay_stream_tests.rs"]
mod tests;
