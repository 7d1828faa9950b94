//! An upgrade through the HTTP proxy (a WebSocket, or any protocol a plain `http://`
//! request asks for with `Upgrade`), once the gate cleared its request: sent on a
//! connection of its own, never kept; the server's `101` is the client's too, and then the
//! bytes of both upgraded connections are carried both ways until both end, the request's
//! event reported with what the server's connection carried. Any other answer goes back as
//! a response.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use http_body_util::{BodyExt, Empty};
use hyper::body::{Body, Incoming};
use hyper::header::CONTENT_LENGTH;
use hyper::upgrade::OnUpgrade;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

use super::destination_gate::{Cleared, Gate};
use super::hop_by_hop;
use super::origin_connection::{Counters, OriginConnection};
use super::proxy_answer::{self as answer, ProxyBody};
use super::relay_outcome::Outcome;
use super::reported_body::ReportedBody;
use super::request_guard::Switched;

/// The client's side of the upgrade `request` asks for, which hyper hands over after a
/// `101`: one of HTTP/1.1 with an `Upgrade` header (hyper's reading) and no body.
pub fn asked(request: &mut Request<Incoming>) -> Option<OnUpgrade> {
    let wanted = request.extensions().get::<OnUpgrade>().is_some();
    (wanted && request.body().is_end_stream()).then(|| hyper::upgrade::on(request))
}

/// Where an upgrade goes and what it reports to.
pub struct Upgrade<'a> {
    pub host: &'a str,
    pub port: u16,
    pub cleared: Cleared,
    pub outcome: Outcome,
    pub gate: Arc<Gate>,
    /// Told when the answer is `101`, so that the request guard lets the bytes after pass.
    pub switched: &'a Switched,
}

impl Upgrade<'_> {
    /// Sends `request` (in origin form, its upgrade kept) and answers as the server did.
    pub async fn send(self, request: Request<Incoming>, client: OnUpgrade) -> Response<ProxyBody> {
        let Upgrade {
            host,
            port,
            cleared,
            mut outcome,
            gate,
            switched,
        } = self;
        let addresses = &cleared.addresses;
        let sent = match OriginConnection::open_upgradable(host, port, addresses).await {
            // A request that was not sent is not tried again: its error is all that counts.
            Ok(mut origin) => (origin.send(request).await)
                .map(|r| (r, origin))
                .map_err(|(why, _)| why),
            Err(why) => Err(why),
        };
        let (mut response, origin) = match sent {
            Ok(sent) => sent,
            Err(why) => {
                outcome.reason = format!("{}; the connection failed: {why}", cleared.reason);
                outcome.report(&gate);
                return answer::unreachable(host, port, &why);
            }
        };
        outcome.address = Some(origin.address);
        outcome.reason = cleared.reason;
        let counters = origin.counters.clone();
        if response.status() != StatusCode::SWITCHING_PROTOCOLS {
            let (mut parts, body) = response.into_parts();
            hop_by_hop::strip(&mut parts.headers);
            let body = ReportedBody::new(body, outcome, gate, counters, (0, 0));
            return Response::from_parts(parts, body.map_err(Into::into).boxed());
        }
        let server = hyper::upgrade::on(&mut response);
        let (mut parts, _) = response.into_parts();
        hop_by_hop::strip_but_upgrade(&mut parts.headers);
        parts.headers.remove(CONTENT_LENGTH);
        parts.extensions = Default::default();
        switched.store(true, Ordering::Release);
        tokio::spawn(carry(client, server, outcome, gate, counters));
        let empty = Empty::new().map_err(|never| match never {}).boxed();
        Response::from_parts(parts, empty)
    }
}

/// Carries the upgraded connections' bytes both ways until both have ended, then reports.
async fn carry(
    client: OnUpgrade,
    server: OnUpgrade,
    mut outcome: Outcome,
    gate: Arc<Gate>,
    counters: Arc<Counters>,
) {
    match tokio::try_join!(client, server) {
        Ok((client, server)) => {
            let (mut client, mut server) = (TokioIo::new(client), TokioIo::new(server));
            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
        }
        Err(why) => outcome.reason = format!("{}; the upgrade failed: {why}", outcome.reason),
    }
    (outcome.up, outcome.down) = counters.get();
    outcome.report(&gate);
}
