//! The client's stream as the HTTP implementation reads it: every request head held back
//! until it is whole and passes `http_head`'s checks, and nothing handed on beyond the
//! message being read (a body's bytes by its own framing), so that each pipelined request
//! is checked as a head before it is parsed as one. After a `CONNECT` head, the tunnel's
//! bytes pass as they are; after an upgrade request without a body, so do the new
//! protocol's once the proxy answered it `101` (its `Switched` flag, which hyper reads
//! before it reads on), else the next head is checked as any. A head that fails is replaced by a request the proxy answers
//! with `400` and the reason (its slot), after which the stream ends.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::chunked_body::ChunkedBody;
use super::http_head::{head_end, parse_head, BodyLength};

const READ_CHUNK: usize = 16 * 1024;
/// What stands in for a refused head; the proxy answers it from the slot, never forwards it.
pub const STAND_IN: &[u8] = b"REFUSED / HTTP/1.1\r\n\r\n";

/// Why the last head was refused, for the proxy's answer to the stand-in.
pub type RefusedHead = Arc<Mutex<Option<String>>>;

/// Set by the proxy when it answers the upgrade request just handed on with `101`.
pub type Switched = Arc<AtomicBool>;

enum Phase {
    /// A head; `checked` bytes of it were read already.
    Head {
        checked: usize,
    },
    Length(u64),
    Chunked(ChunkedBody),
    /// After an upgrade request without a body, until the proxy's answer says which follows.
    Upgrading,
    Tunnel,
    /// Nothing more: the stand-in for a refused head was the last.
    Ended,
}

pub struct RequestGuard<S> {
    inner: S,
    /// Read from `inner`, not yet handed on; the first `cleared` of them may be.
    held: Vec<u8>,
    cleared: usize,
    phase: Phase,
    inner_ended: bool,
    refused: RefusedHead,
    switched: Switched,
}

impl<S> RequestGuard<S> {
    pub fn new(inner: S, refused: RefusedHead, switched: Switched) -> RequestGuard<S> {
        RequestGuard {
            inner,
            held: Vec::new(),
            cleared: 0,
            phase: Phase::Head { checked: 0 },
            inner_ended: false,
            refused,
            switched,
        }
    }

    /// Clears more of `held` for the reader, or moves on to the next phase: true when it
    /// did, false when it needs more.
    fn advance(&mut self) -> io::Result<bool> {
        let pending = &self.held[self.cleared..];
        match &mut self.phase {
            Phase::Head { checked } => {
                let end = match head_end(pending, checked) {
                    Ok(Some(end)) => end,
                    Ok(None) => return Ok(false),
                    Err(why) => return Ok(self.refuse(why)),
                };
                let head = match parse_head(&pending[..end]) {
                    Ok(head) => head,
                    Err(why) => return Ok(self.refuse(why)),
                };
                self.cleared += end;
                // Only the answer to this head may switch what follows it.
                self.switched.store(false, Ordering::Release);
                self.phase = match head.body {
                    _ if head.connect => Phase::Tunnel,
                    BodyLength::Empty if head.upgrade => Phase::Upgrading,
                    BodyLength::Empty => Phase::Head { checked: 0 },
                    BodyLength::Length(n) => Phase::Length(n),
                    BodyLength::Chunked => Phase::Chunked(ChunkedBody::new()),
                };
                Ok(true)
            }
            Phase::Length(left) => {
                let n = (pending.len() as u64).min(*left);
                *left -= n;
                self.cleared += n as usize;
                if *left == 0 {
                    self.phase = Phase::Head { checked: 0 };
                }
                Ok(n > 0 || matches!(self.phase, Phase::Head { .. }))
            }
            Phase::Chunked(body) => match body.advance(pending) {
                Ok(None) => Ok(false),
                Ok(Some(found)) => {
                    self.cleared += found.bytes;
                    if found.ended {
                        self.phase = Phase::Head { checked: 0 };
                    }
                    Ok(true)
                }
                // Mid-body there is no answering: the reader's error ends the connection.
                Err(why) => Err(io::Error::new(io::ErrorKind::InvalidData, why)),
            },
            Phase::Upgrading => {
                self.phase = match self.switched.swap(false, Ordering::AcqRel) {
                    true => Phase::Tunnel,
                    false => Phase::Head { checked: 0 },
                };
                Ok(true)
            }
            Phase::Tunnel => {
                self.cleared = self.held.len();
                Ok(!pending.is_empty())
            }
            Phase::Ended => Ok(false),
        }
    }

    /// Puts the stand-in where the refused head was, and ends the stream after it.
    fn refuse(&mut self, why: String) -> bool {
        *self.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
        self.held = STAND_IN.to_vec();
        self.cleared = STAND_IN.len();
        self.phase = Phase::Ended;
        self.inner_ended = true;
        true
    }
}

impl<S: AsyncRead + Unpin> RequestGuard<S> {
    /// Reads more of `inner` into `held`; `inner_ended` at its end.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let start = self.held.len();
        self.held.resize(start + READ_CHUNK, 0);
        let mut buf = ReadBuf::new(&mut self.held[start..]);
        let read = Pin::new(&mut self.inner).poll_read(cx, &mut buf);
        let n = buf.filled().len();
        self.held.truncate(start + n);
        ready!(read)?;
        if n == 0 {
            self.inner_ended = true;
        }
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for RequestGuard<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.cleared > 0 {
                let n = this.cleared.min(out.remaining());
                out.put_slice(&this.held[..n]);
                this.held.drain(..n);
                this.cleared -= n;
                return Poll::Ready(Ok(()));
            }
            if this.advance()? {
                continue;
            }
            if this.inner_ended {
                return Poll::Ready(Ok(()));
            }
            ready!(this.poll_fill(cx))?;
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for RequestGuard<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
#[path = "request_guard_tests.rs"]
mod tests;
