//! The host's own connection to a cleared address, and a tunnel's bytes carried both ways
//! over it; a tunnel that starts with a TLS ClientHello must name the host it was opened
//! for (domain fronting is refused).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use super::client_hello::{server_name, sni_matches, Hello};

const CONNECT_WAIT: Duration = Duration::from_secs(10);
/// How much of a tunnel's first bytes is held to read a ClientHello.
const HELLO_LIMIT: usize = 18 * 1024;

/// The first of `addresses` that accepts, each tried within `CONNECT_WAIT`.
pub async fn connect(addresses: &[SocketAddr]) -> Result<(TcpStream, SocketAddr), String> {
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
pub struct Fronted(pub String);

/// Carries bytes both ways until both have ended. With `check`, what the client sends is
/// held until it is known not to be a ClientHello for another server. Returns the bytes
/// sent up and down.
pub async fn carry<C: AsyncRead + AsyncWrite>(
    client: C,
    upstream: TcpStream,
    check: Option<&str>,
) -> Result<(u64, u64), Fronted> {
    let (mut client_read, mut client_write) = tokio::io::split(client);
    let (mut up_read, mut up_write) = upstream.into_split();
    let toward_upstream = async {
        let mut held = Vec::new();
        if let Some(host) = check {
            held = hold_hello(&mut client_read, host).await?;
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
async fn hold_hello<R: AsyncRead + Unpin>(client: &mut R, host: &str) -> Result<Vec<u8>, Fronted> {
    let mut held = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => return Ok(held),
            Ok(n) => held.extend_from_slice(&buf[..n]),
        }
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
    }
}
