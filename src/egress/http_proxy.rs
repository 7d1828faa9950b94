//! The HTTP proxy on one client connection: hyper reads the requests (through the request
//! guard, which checks each head before hyper parses it) and the proxy answers each in
//! turn, keep-alive and pipelined alike. Every request is put to the gate on its own:
//! `CONNECT` opens a tunnel, whose ClientHello must name its host; a plain request with an
//! absolute `http://` URI goes, in origin form and without hop-by-hop headers, to the
//! server its own URI names, over a connection kept only while that stays the same; an
//! upgrade request keeps its `Upgrade` and goes over a connection of its own.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderValue, HOST};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode, Uri, Version};
use hyper_util::rt::TokioIo;

use super::destination_gate::{Cleared, Denied, Gate};
use super::hop_by_hop;
use super::http_head::host_port;
use super::http_upgrade::{self, Upgrade};
use super::origin_connection::OriginConnection;
use super::proxy_answer::{self as answer, ProxyBody};
use super::relay_outcome::Outcome;
use super::relay_stream::RelayStream;
use super::reported_body::ReportedBody;
use super::request_guard::{RefusedHead, RequestGuard, Switched};
use super::tunnel::{carry, connect, Fronted};

/// Serves `client`'s requests until it closes, a refusal closes it, or a tunnel takes it.
pub async fn serve(client: RelayStream, gate: Arc<Gate>) {
    let (refused, switched) = (RefusedHead::default(), Switched::default());
    let io = TokioIo::new(RequestGuard::new(client, refused.clone(), switched.clone()));
    let proxy = Arc::new(Proxy {
        gate,
        refused,
        switched,
        origin: Mutex::new(None),
    });
    let service = service_fn(move |request| {
        let proxy = proxy.clone();
        async move { Ok::<_, Infallible>(proxy.answer(request).await) }
    });
    let _ = http1::Builder::new()
        .half_close(true)
        .serve_connection(io, service)
        .with_upgrades()
        .await;
}

struct Proxy {
    gate: Arc<Gate>,
    refused: RefusedHead,
    switched: Switched,
    /// The connection of the last plain request, for the next one to the same place.
    origin: Mutex<Option<OriginConnection>>,
}

impl Proxy {
    async fn answer(&self, request: Request<Incoming>) -> Response<ProxyBody> {
        let refused = self
            .refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(why) = refused {
            return answer::bad_request(&why);
        }
        if request.method() == Method::CONNECT {
            return self.tunnel(request).await;
        }
        match destination(&request) {
            Ok((host, port)) => self.forward(request, &host, port).await,
            Err(why) => answer::bad_request(&why),
        }
    }

    /// The gate's clearance, or the answer that refuses (the outcome then says why); for a
    /// request that would reuse a connection, decided on the address it is open to.
    async fn clear(
        &self,
        outcome: &mut Outcome,
        connected: Option<SocketAddr>,
    ) -> Result<Cleared, Response<ProxyBody>> {
        let (host, port) = (outcome.host.as_str(), outcome.port);
        let checked = match connected {
            Some(address) => self.gate.recheck(host, port, address).await,
            None => self.gate.check(host, port).await,
        };
        match checked {
            Ok(cleared) => {
                outcome.allowed = true;
                Ok(cleared)
            }
            Err(Denied::Refused(reason)) => {
                let refusal = answer::refused(host, port, &reason);
                outcome.reason = reason;
                Err(refusal)
            }
            Err(Denied::Unresolved(reason)) => {
                let refusal = answer::unreachable(host, port, &reason);
                outcome.reason = reason;
                Err(refusal)
            }
        }
    }

    async fn tunnel(&self, mut request: Request<Incoming>) -> Response<ProxyBody> {
        let authority = request.uri().authority().map(|a| a.as_str()).unwrap_or("");
        let (host, port) = match host_port(authority, None) {
            Ok(found) => found,
            Err(why) => return answer::bad_request(&why),
        };
        let mut outcome = Outcome::new(&host, port);
        let cleared = match self.clear(&mut outcome, None).await {
            Ok(cleared) => cleared,
            Err(refusal) => {
                outcome.report(&self.gate);
                return refusal;
            }
        };
        let (upstream, address) = match connect(&cleared.addresses).await {
            Ok(found) => found,
            Err(why) => {
                outcome.reason = format!("{}; the connection failed: {why}", cleared.reason);
                outcome.report(&self.gate);
                return answer::unreachable(&host, port, &why);
            }
        };
        outcome.address = Some(address);
        outcome.reason = cleared.reason;
        let upgrade = hyper::upgrade::on(&mut request);
        let gate = self.gate.clone();
        tokio::spawn(async move {
            if let Ok(upgraded) = upgrade.await {
                match carry(TokioIo::new(upgraded), upstream, Some(&host)).await {
                    Ok((up, down)) => (outcome.up, outcome.down) = (up, down),
                    Err(Fronted(sni)) => {
                        outcome.allowed = false;
                        outcome.reason = format!(
                            "the TLS server name '{sni}' is not the host the tunnel was opened for (domain fronting)"
                        );
                    }
                }
            }
            outcome.report(&gate);
        });
        answer::established()
    }

    async fn forward(
        &self,
        mut request: Request<Incoming>,
        host: &str,
        port: u16,
    ) -> Response<ProxyBody> {
        let mut outcome = Outcome::new(host, port);
        let upgrade = http_upgrade::asked(&mut request);
        let kept = self.origin.lock().unwrap_or_else(|e| e.into_inner()).take();
        let connected = kept
            .as_ref()
            .filter(|o| o.serves(host, port, &[o.address]))
            .map(|o| o.address);
        let cleared = match self.clear(&mut outcome, connected).await {
            Ok(cleared) => cleared,
            Err(refusal) => {
                outcome.report(&self.gate);
                return refusal;
            }
        };
        let request = match origin_form(request, host, port, upgrade.is_some()) {
            Ok(request) => request,
            Err(why) => return answer::bad_request(&why),
        };
        if let Some(client) = upgrade {
            *self.origin.lock().unwrap_or_else(|e| e.into_inner()) = kept;
            let (gate, switched) = (self.gate.clone(), &self.switched);
            let upgrade = Upgrade {
                host,
                port,
                cleared,
                outcome,
                gate,
                switched,
            };
            return upgrade.send(request, client).await;
        }
        let sent = exchange(kept, request, host, port, &cleared).await;
        let (response, origin, from) = match sent {
            Ok(sent) => sent,
            Err(why) => {
                outcome.reason = format!("{}; the connection failed: {why}", cleared.reason);
                outcome.report(&self.gate);
                return answer::unreachable(host, port, &why);
            }
        };
        outcome.address = Some(origin.address);
        outcome.reason = cleared.reason;
        if response.status() == StatusCode::SWITCHING_PROTOCOLS {
            outcome.reason = "the server switched protocols, which the proxy does not carry".into();
            outcome.report(&self.gate);
            return answer::unreachable(host, port, "the server switched protocols");
        }
        let counters = origin.counters.clone();
        *self.origin.lock().unwrap_or_else(|e| e.into_inner()) = Some(origin);
        let (mut parts, body) = response.into_parts();
        hop_by_hop::strip(&mut parts.headers);
        let body = ReportedBody::new(body, outcome, self.gate.clone(), counters, from);
        Response::from_parts(parts, body.map_err(Into::into).boxed())
    }
}

/// Sends `request` over `kept` when it serves the destination, else (or when the server
/// had just closed it) over a new connection; the response, the connection and its
/// counters before the request.
async fn exchange(
    kept: Option<OriginConnection>,
    request: Request<Incoming>,
    host: &str,
    port: u16,
    cleared: &Cleared,
) -> Result<(Response<Incoming>, OriginConnection, (u64, u64)), String> {
    let addresses = &cleared.addresses;
    let mut origin = match kept.filter(|o| o.serves(host, port, addresses)) {
        Some(mut origin) => match origin.ready().await {
            true => origin,
            false => OriginConnection::open(host, port, addresses).await?,
        },
        None => OriginConnection::open(host, port, addresses).await?,
    };
    let from = origin.counters.get();
    match origin.send(request).await {
        Ok(response) => Ok((response, origin, from)),
        Err((_, Some(unsent))) => {
            let mut fresh = OriginConnection::open(host, port, addresses).await?;
            let from = fresh.counters.get();
            match fresh.send(unsent).await {
                Ok(response) => Ok((response, fresh, from)),
                Err((why, _)) => Err(why),
            }
        }
        Err((why, None)) => Err(why),
    }
}

/// Where a plain request goes: its absolute `http://` URI's host and port, with which a
/// `Host` header (one at most) must agree.
fn destination(request: &Request<Incoming>) -> Result<(String, u16), String> {
    let uri = request.uri();
    if !uri
        .scheme_str()
        .is_some_and(|s| s.eq_ignore_ascii_case("http"))
    {
        return Err("a plain request through the proxy needs an absolute http:// URI (HTTPS goes through CONNECT: set HTTPS_PROXY)".into());
    }
    let authority = uri.authority().map(|a| a.as_str()).unwrap_or("");
    let (host, port) = host_port(authority, Some(80))?;
    let hosts: Vec<&HeaderValue> = request.headers().get_all(HOST).iter().collect();
    let agrees = |v: &&HeaderValue| {
        v.to_str()
            .ok()
            .and_then(|text| host_port(text, Some(80)).ok())
            == Some((host.clone(), port))
    };
    if hosts.len() > 1 || !hosts.iter().all(agrees) {
        return Err(format!(
            "the Host header is not the request's host {host}:{port}"
        ));
    }
    Ok((host, port))
}

/// The request as the server gets it: origin-form target, HTTP/1.1, hop-by-hop headers
/// gone (but an `upgrade`'s own), `Host` naming the destination; hyper frames its body.
fn origin_form(
    request: Request<Incoming>,
    host: &str,
    port: u16,
    upgrade: bool,
) -> Result<Request<Incoming>, String> {
    let (mut parts, body) = request.into_parts();
    let target = match parts.uri.path_and_query().map(|p| p.as_str()) {
        None | Some("") => "/".to_string(),
        Some(p) if p.starts_with('?') => format!("/{p}"),
        Some(p) => p.to_string(),
    };
    parts.uri = target
        .parse::<Uri>()
        .map_err(|_| "the request target is not a URI path".to_string())?;
    parts.version = Version::HTTP_11;
    parts.extensions = Default::default();
    match upgrade {
        true => hop_by_hop::strip_but_upgrade(&mut parts.headers),
        false => hop_by_hop::strip(&mut parts.headers),
    }
    let shown = match host.contains(':') {
        true => format!("[{host}]"),
        false => host.to_string(),
    };
    let value = match port {
        80 => shown,
        _ => format!("{shown}:{port}"),
    };
    let value = HeaderValue::from_str(&value).map_err(|_| format!("'{value}' is not a host"))?;
    parts.headers.insert(HOST, value);
    Ok(Request::from_parts(parts, body))
}
