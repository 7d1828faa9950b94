//! `Egress` as JavaScript gives it (`'none' | 'public' | 'bridge' | EgressPolicy`), and the
//! host's `onRequest`/`onEvent` bridged as weak callbacks (they never keep Node running).

use std::collections::HashMap;
use std::sync::Arc;

use napi::bindgen_prelude::{Either, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use super::durations::positive_duration_ms;
use crate::egress::{
    AskFuture, Egress, EgressAsker, EgressEvent, EgressEvents, EgressMode, EgressRequest,
    EgressSpec,
};
use crate::error::Result;

/// A destination the lists leave open.
#[napi(object)]
pub struct EgressRequestInfo {
    /// The session that asks.
    pub session_id: String,
    /// The name (or address) the client in the container asked for, lower-cased.
    pub host: String,
    /// The port it asked for.
    pub port: u32,
}

/// One relayed request (plain HTTP: several on a kept-alive proxy connection) or tunnel
/// (`CONNECT`, SOCKS5), reported when it ends.
#[napi(object)]
pub struct EgressEventInfo {
    /// The session whose request or tunnel it was.
    pub session_id: String,
    /// The name (or address) the client asked for.
    pub host: String,
    /// The port it asked for.
    pub port: u32,
    /// The address the host connected to (absent when it did not connect).
    pub address: Option<String>,
    /// Whether the policy let it through (false also for a tunnel closed for domain
    /// fronting).
    pub allowed: bool,
    /// Why it was allowed or refused, or how it failed.
    pub reason: String,
    /// Bytes from the container to the destination.
    pub bytes_up: f64,
    /// Bytes from the destination to the container.
    pub bytes_down: f64,
    /// From the client's request to its end (its response sent, or its tunnel closed).
    pub ms: f64,
}

pub type AskCallback = ThreadsafeFunction<
    EgressRequestInfo,
    Either<bool, Promise<bool>>,
    EgressRequestInfo,
    napi::Status,
    false,
    true,
>;
pub type EventCallback =
    ThreadsafeFunction<EgressEventInfo, (), EgressEventInfo, napi::Status, false, true>;

/// Where a session may connect, beyond `'none'`, `'public'` and `'bridge'`.
#[napi(object, object_to_js = false)]
pub struct EgressPolicy {
    /// Destinations allowed: `'example.com'`, `'*.example.com'`, `'example.com:443'`,
    /// `'203.0.113.0/24'`, `'10.1.2.3:5432'`, `'*'` (any public destination). A name never
    /// opens a loopback, private, link-local or host address: only an IP or CIDR entry does.
    pub allow: Option<Vec<String>>,
    /// Destinations refused, in the same grammar; wins over `allow`.
    pub deny: Option<Vec<String>>,
    /// Names this session's connections resolve to these addresses instead of by the
    /// system's resolver.
    pub hosts: Option<HashMap<String, Vec<String>>>,
    /// Asked for what neither list decides, once per host:port per session; the answer is
    /// remembered. A callback that throws or takes longer than `askTimeoutMs` means no.
    #[napi(ts_type = "(req: EgressRequestInfo) => boolean | Promise<boolean>")]
    pub on_request: Option<AskCallback>,
    /// Called once per relayed request (several on a kept-alive proxy connection) or tunnel,
    /// when it ends.
    #[napi(ts_type = "(event: EgressEventInfo) => void")]
    pub on_event: Option<EventCallback>,
    /// Relayed connections open at once, at most (default 256).
    pub max_connections: Option<u32>,
    /// A connection with no traffic for this long is closed (default 600000).
    pub idle_timeout_ms: Option<f64>,
    /// How long `onRequest` may take to answer before its silence means no (default 30000;
    /// a person asked through an MCP client may need longer).
    pub ask_timeout_ms: Option<f64>,
}

pub type EgressOption = Either<String, EgressPolicy>;

struct JsAsker(Arc<AskCallback>);

impl EgressAsker for JsAsker {
    fn ask(&self, request: EgressRequest) -> AskFuture {
        let callback = self.0.clone();
        Box::pin(async move {
            let info = EgressRequestInfo {
                session_id: request.session_id,
                host: request.host,
                port: u32::from(request.port),
            };
            match callback.call_async(info).await {
                Ok(Either::A(answer)) => answer,
                Ok(Either::B(promise)) => promise.await.unwrap_or(false),
                Err(_) => false,
            }
        })
    }
}

struct JsEvents(EventCallback);

impl EgressEvents for JsEvents {
    fn event(&self, e: EgressEvent) {
        let info = EgressEventInfo {
            session_id: e.session_id,
            host: e.host,
            port: u32::from(e.port),
            address: e.address,
            allowed: e.allowed,
            reason: e.reason,
            bytes_up: e.bytes_up as f64,
            bytes_down: e.bytes_down as f64,
            ms: e.ms,
        };
        self.0.call(info, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// The core's `Egress` for what JavaScript gave; `INVALID_ARGUMENT` for anything else.
pub fn egress_from_js(option: EgressOption) -> Result<Egress> {
    let policy = match option {
        Either::A(mode) => return Ok(Egress::of(EgressSpec::of(EgressMode::from_name(&mode)?))),
        Either::B(policy) => policy,
    };
    let whole_ms = |d: Option<std::time::Duration>| d.map(|d| d.as_millis() as u64);
    let idle_timeout_ms = whole_ms(positive_duration_ms(
        policy.idle_timeout_ms,
        "egress idleTimeoutMs",
    )?);
    let ask_timeout_ms = whole_ms(positive_duration_ms(
        policy.ask_timeout_ms,
        "egress askTimeoutMs",
    )?);
    let spec = EgressSpec {
        mode: EgressMode::Policy,
        allow: policy.allow.unwrap_or_default(),
        deny: policy.deny.unwrap_or_default(),
        hosts: policy.hosts.unwrap_or_default().into_iter().collect(),
        max_connections: policy.max_connections,
        idle_timeout_ms,
        ask_timeout_ms,
    };
    let egress = Egress {
        spec,
        asker: policy
            .on_request
            .map(|f| Arc::new(JsAsker(Arc::new(f))) as Arc<dyn EgressAsker>),
        events: policy
            .on_event
            .map(|f| Arc::new(JsEvents(f)) as Arc<dyn EgressEvents>),
    };
    egress.compile()?;
    Ok(egress)
}
