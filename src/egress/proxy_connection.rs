//! One connection a client in the container made to the relay, by the listener it came
//! to: the HTTP proxy's (each request on it checked on its own), or SOCKS5's, whose one
//! `CONNECT` is put to the gate, refused with its reply code, or carried as a tunnel whose
//! ClientHello must name the host it was opened for.

use std::sync::Arc;

use tokio::io::AsyncWriteExt;

use super::destination_gate::{Denied, Gate};
use super::http_proxy;
use super::relay_channel::Accepted;
use super::relay_outcome::Outcome;
use super::relay_stream::RelayStream;
use super::socks5;
use super::tunnel::{carry, connect, Fronted};

/// Index of the HTTP proxy listener among the relay's ports (SOCKS5 is the next).
pub const HTTP_LISTENER: u8 = 0;

pub async fn serve(accepted: Accepted, gate: Arc<Gate>) {
    match accepted.listener {
        HTTP_LISTENER => http_proxy::serve(accepted.stream, gate).await,
        _ => socks_tunnel(accepted.stream, &gate).await,
    }
}

async fn socks_tunnel(mut client: RelayStream, gate: &Gate) {
    let request = match socks5::handshake(&mut client).await {
        Ok(request) => request,
        Err(socks5::SocksError::Protocol(why)) => {
            tracing::debug!("session relay: SOCKS5 client refused: {why}");
            return;
        }
        Err(_) => return,
    };
    let mut outcome = Outcome::new(&request.host, request.port);
    let cleared = match gate.check(&request.host, request.port).await {
        Ok(cleared) => cleared,
        Err(denied) => {
            let (code, reason) = match denied {
                Denied::Refused(reason) => (socks5::NOT_ALLOWED, reason),
                Denied::Unresolved(reason) => (socks5::HOST_UNREACHABLE, reason),
            };
            answer(&mut client, code).await;
            outcome.reason = reason;
            return outcome.report(gate);
        }
    };
    outcome.allowed = true;
    let (upstream, address) = match connect(&cleared.addresses).await {
        Ok(found) => found,
        Err(why) => {
            answer(&mut client, socks5::HOST_UNREACHABLE).await;
            outcome.reason = format!("{}; the connection failed: {why}", cleared.reason);
            return outcome.report(gate);
        }
    };
    outcome.address = Some(address);
    outcome.reason = cleared.reason;
    if client
        .write_all(&socks5::reply(socks5::SUCCEEDED))
        .await
        .is_ok()
    {
        match carry(client, upstream, Some(&request.host)).await {
            Ok((up, down)) => (outcome.up, outcome.down) = (up, down),
            Err(Fronted(sni)) => {
                outcome.allowed = false;
                outcome.reason = format!(
                    "the TLS server name '{sni}' is not the host the tunnel was opened for (domain fronting)"
                );
            }
        }
    }
    outcome.report(gate);
}

/// A refusing reply, and the end of the connection.
async fn answer(client: &mut RelayStream, code: u8) {
    let _ = client.write_all(&socks5::reply(code)).await;
    let _ = client.shutdown().await;
}
