//! One connection a client in the container made to the relay: what it asks for read as
//! HTTP proxy or SOCKS5, the destination put to the gate, a refusal the client's tool can
//! show, or the host's own connection to a cleared address and the bytes carried both
//! ways. A tunnel that starts with a TLS ClientHello must name the host it was opened for.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::net::TcpStream;

use super::client_hello::{server_name, sni_matches, Hello};
use super::destination_gate::{Denied, Gate};
use super::egress_settings::EgressEvent;
use super::http_proxy::{self, ProxyRequest};
use super::relay_channel::Accepted;
use super::socks5;

/// Index of the HTTP proxy listener among the relay's ports (SOCKS5 is the next).
pub const HTTP_LISTENER: u8 = 0;
const CONNECT_WAIT: Duration = Duration::from_secs(10);
/// How much of a tunnel's first bytes is held to read a ClientHello.
const HELLO_LIMIT: usize = 18 * 1024;

enum Client {
    Http,
    Socks,
}

/// What happened to one connection, for its event.
struct Outcome {
    host: String,
    port: u16,
    address: Option<SocketAddr>,
    allowed: bool,
    reason: String,
    up: u64,
    down: u64,
}

pub async fn serve(accepted: Accepted, gate: Arc<Gate>) {
    let started = Instant::now();
    let mut client = accepted.stream;
    let kind = match accepted.listener {
        HTTP_LISTENER => Client::Http,
        _ => Client::Socks,
    };
    let Some(outcome) = relay(&kind, &mut client, &gate).await else {
        return;
    };
    gate.report(EgressEvent {
        session_id: gate.session_id.clone(),
        host: outcome.host,
        port: outcome.port,
        address: outcome.address.map(|a| a.ip().to_string()),
        allowed: outcome.allowed,
        reason: outcome.reason,
        bytes_up: outcome.up,
        bytes_down: outcome.down,
        ms: started.elapsed().as_secs_f64() * 1000.0,
    });
}

/// `None` for a client that never said where to (nothing to report).
async fn relay(kind: &Client, client: &mut DuplexStream, gate: &Gate) -> Option<Outcome> {
    let (host, port, first, tunnel) = match kind {
        Client::Http => match http_proxy::read_request(client).await {
            Ok(ProxyRequest::Connect { host, port, rest }) => (host, port, rest, true),
            Ok(ProxyRequest::Forward {
                host,
                port,
                mut head,
                rest,
            }) => {
                head.extend_from_slice(&rest);
                (host, port, head, false)
            }
            Err(http_proxy::ProxyError::BadRequest(why)) => {
                let body = format!("container-isolation: {why}");
                let _ = client
                    .write_all(&http_proxy::refusal(400, "Bad Request", &body))
                    .await;
                return None;
            }
            Err(_) => return None,
        },
        Client::Socks => match socks5::handshake(client).await {
            Ok(request) => (request.host, request.port, Vec::new(), true),
            Err(socks5::SocksError::Protocol(why)) => {
                tracing::debug!("session relay: SOCKS5 client refused: {why}");
                return None;
            }
            Err(_) => return None,
        },
    };
    let mut outcome = Outcome {
        host,
        port,
        address: None,
        allowed: false,
        reason: String::new(),
        up: 0,
        down: 0,
    };
    let cleared = match gate.check(&outcome.host, port).await {
        Ok(cleared) => cleared,
        Err(Denied::Refused(reason)) => {
            refuse(kind, client, &outcome.host, port, &reason).await;
            outcome.reason = reason;
            return Some(outcome);
        }
        Err(Denied::Unresolved(reason)) => {
            unreachable(kind, client, &outcome.host, port, &reason).await;
            outcome.reason = reason;
            return Some(outcome);
        }
    };
    outcome.allowed = true;
    let (upstream, address) = match connect(&cleared.addresses).await {
        Ok(found) => found,
        Err(why) => {
            unreachable(kind, client, &outcome.host, port, &why).await;
            outcome.reason = format!("{}; the connection failed: {why}", cleared.reason);
            return Some(outcome);
        }
    };
    outcome.address = Some(address);
    outcome.reason = cleared.reason;
    let established: &[u8] = match kind {
        Client::Http if tunnel => http_proxy::connect_established(),
        Client::Http => &[],
        Client::Socks => &socks5::reply(socks5::SUCCEEDED),
    };
    if client.write_all(established).await.is_err() {
        return Some(outcome);
    }
    let check = tunnel.then_some(outcome.host.as_str());
    match carry(client, upstream, first, check).await {
        Ok((up, down)) => (outcome.up, outcome.down) = (up, down),
        Err(Fronted(sni)) => {
            outcome.allowed = false;
            outcome.reason = format!(
                "the TLS server name '{sni}' is not the host the tunnel was opened for (domain fronting)"
            );
        }
    }
    Some(outcome)
}

fn refusal_line(host: &str, port: u16, reason: &str) -> String {
    format!(
        "container-isolation: egress to {host}:{port} refused by the session's policy ({reason}); \
         the host allows it by adding '{host}:{port}' (or, for a private address, its address or range) \
         to the session's egress allow list"
    )
}

async fn refuse(kind: &Client, client: &mut DuplexStream, host: &str, port: u16, reason: &str) {
    let answer = match kind {
        Client::Http => http_proxy::refusal(403, "Forbidden", &refusal_line(host, port, reason)),
        Client::Socks => socks5::reply(socks5::NOT_ALLOWED).to_vec(),
    };
    let _ = client.write_all(&answer).await;
    let _ = client.shutdown().await;
}

async fn unreachable(kind: &Client, client: &mut DuplexStream, host: &str, port: u16, why: &str) {
    let answer = match kind {
        Client::Http => {
            let line = format!("container-isolation: {host}:{port} could not be reached: {why}");
            http_proxy::refusal(502, "Bad Gateway", &line)
        }
        Client::Socks => socks5::reply(socks5::HOST_UNREACHABLE).to_vec(),
    };
    let _ = client.write_all(&answer).await;
    let _ = client.shutdown().await;
}

/// The first of `addresses` that accepts, each tried within `CONNECT_WAIT`.
async fn connect(addresses: &[SocketAddr]) -> Result<(TcpStream, SocketAddr), String> {
    let mut last = String::from("no address");
    for address in addresses {
        match tokio::time::timeout(CONNECT_WAIT, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok((stream, *address));
            }
            Ok(Err(e)) => last = format!("{address}: {e}"),
            Err(_) => last = format!("{address}: no answer within {} s", CONNECT_WAIT.as_secs()),
        }
    }
    Err(last)
}

/// A tunnel refused for the server name its ClientHello gave.
struct Fronted(String);

/// Carries bytes both ways until both have ended; `first` goes upstream first. With
/// `check`, what the client sends is held until it is known not to be a ClientHello for
/// another server. Returns the bytes sent up and down.
async fn carry(
    client: &mut DuplexStream,
    upstream: TcpStream,
    first: Vec<u8>,
    check: Option<&str>,
) -> Result<(u64, u64), Fronted> {
    let (mut client_read, mut client_write) = tokio::io::split(client);
    let (mut up_read, mut up_write) = upstream.into_split();
    let toward_upstream = async {
        let mut held = first;
        if let Some(host) = check {
            held = hold_hello(&mut client_read, held, host).await?;
        }
        let mut sent = held.len() as u64;
        if up_write.write_all(&held).await.is_ok() {
            sent += tokio::io::copy(&mut client_read, &mut up_write)
                .await
                .unwrap_or(0);
        }
        let _ = up_write.shutdown().await;
        Ok::<u64, Fronted>(sent)
    };
    let toward_client = async {
        let got = tokio::io::copy(&mut up_read, &mut client_write)
            .await
            .unwrap_or(0);
        let _ = client_write.shutdown().await;
        got
    };
    // A refused ClientHello ends both directions at once (the server waits for it).
    tokio::try_join!(toward_upstream, async { Ok(toward_client.await) })
}

/// Reads the client's first bytes until they are known not to be a ClientHello, or to be
/// one for `host`; what was read, to send on.
async fn hold_hello<R: AsyncRead + Unpin>(
    client: &mut R,
    mut held: Vec<u8>,
    host: &str,
) -> Result<Vec<u8>, Fronted> {
    let mut buf = [0u8; 4096];
    loop {
        match server_name(&held) {
            Hello::NotTls => return Ok(held),
            Hello::ServerName(sni) if sni_matches(host, sni.as_deref()) => return Ok(held),
            Hello::ServerName(sni) => return Err(Fronted(sni.unwrap_or_default())),
            Hello::Malformed => return Err(Fronted("(a malformed ClientHello)".into())),
            Hello::Incomplete if held.len() >= HELLO_LIMIT => {
                return Err(Fronted("(an oversized ClientHello)".into()))
            }
            Hello::Incomplete => {}
        }
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => return Ok(held),
            Ok(n) => held.extend_from_slice(&buf[..n]),
        }
    }
}
