//! The host's HTTP/1.1 connection (hyper's client) to the server a client's plain requests
//! name: opened to an address the gate cleared, kept for the next request only while that
//! one names the same host:port and the gate clears the same address again, and replaced
//! otherwise (an upgrade's is its own, never kept). The bytes it carries each way are
//! counted for the requests' events.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::body::Incoming;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::tunnel::connect;

/// Bytes written to and read from a connection so far.
#[derive(Default)]
pub struct Counters {
    up: AtomicU64,
    down: AtomicU64,
}

impl Counters {
    pub fn get(&self) -> (u64, u64) {
        (
            self.up.load(Ordering::Relaxed),
            self.down.load(Ordering::Relaxed),
        )
    }
}

pub struct OriginConnection {
    host: String,
    port: u16,
    pub address: SocketAddr,
    sender: SendRequest<Incoming>,
    pub counters: Arc<Counters>,
}

impl OriginConnection {
    /// Connects to the first of `addresses` that accepts.
    pub async fn open(
        host: &str,
        port: u16,
        addresses: &[SocketAddr],
    ) -> Result<OriginConnection, String> {
        Self::open_with(host, port, addresses, false).await
    }

    /// As `open`, for one request that may switch protocols: a `101` hands the connection
    /// over to the response's upgrade.
    pub async fn open_upgradable(
        host: &str,
        port: u16,
        addresses: &[SocketAddr],
    ) -> Result<OriginConnection, String> {
        Self::open_with(host, port, addresses, true).await
    }

    async fn open_with(
        host: &str,
        port: u16,
        addresses: &[SocketAddr],
        upgrades: bool,
    ) -> Result<OriginConnection, String> {
        let (stream, address) = connect(addresses).await?;
        let counters = Arc::new(Counters::default());
        let io = TokioIo::new(Counted {
            inner: stream,
            counters: counters.clone(),
        });
        let (sender, connection) = http1::Builder::new()
            .handshake(io)
            .await
            .map_err(|e| format!("{address}: {e}"))?;
        tokio::spawn(async move {
            let _ = match upgrades {
                true => connection.with_upgrades().await,
                false => connection.await,
            };
        });
        Ok(OriginConnection {
            host: host.to_string(),
            port,
            address,
            sender,
            counters,
        })
    }

    /// Whether the next request for `host:port`, cleared for `addresses`, may use it.
    pub fn serves(&self, host: &str, port: u16, addresses: &[SocketAddr]) -> bool {
        self.host == host
            && self.port == port
            && addresses.contains(&self.address)
            && !self.sender.is_closed()
    }

    /// Waits until the previous response has been read; false once the server closed.
    pub async fn ready(&mut self) -> bool {
        self.sender.ready().await.is_ok()
    }

    /// Sends `request`; when it could not be sent at all (the server had just closed), the
    /// request comes back to be sent on another connection.
    pub async fn send(
        &mut self,
        request: Request<Incoming>,
    ) -> Result<Response<Incoming>, (String, Option<Request<Incoming>>)> {
        self.sender
            .try_send_request(request)
            .await
            .map_err(|mut e| {
                let unsent = e.take_message();
                (e.into_error().to_string(), unsent)
            })
    }
}

/// A stream that counts what passes.
struct Counted {
    inner: TcpStream,
    counters: Arc<Counters>,
}

impl AsyncRead for Counted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut this.inner).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        this.counters.down.fetch_add(n as u64, Ordering::Relaxed);
        read
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = written {
            this.counters.up.fetch_add(n as u64, Ordering::Relaxed);
        }
        written
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
