//! Whether a session may reach `host:port`, and at which addresses: the name checked, then
//! resolved here (never in the container), every address checked, and the host asked once
//! per destination for what the lists leave open. The addresses returned are the ones to
//! connect to: there is no second lookup that DNS rebinding could switch. A name is looked
//! up only when an allow entry could then let it through, or the host's `onRequest` has
//! said yes: a refused name never reaches DNS, where it would carry data out.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::OnceCell;

use super::address_class::{host_addresses, special_kind};
use super::egress_policy::Decision;
use super::egress_settings::{EgressEvent, EgressMode, EgressRequest, Policy};

const RESOLVE_WAIT: Duration = Duration::from_secs(10);

/// Why a destination is not connected to: the policy's refusal, or a name that could not
/// be resolved (which the client hears as unreachable, not as refused).
pub enum Denied {
    Refused(String),
    Unresolved(String),
}

/// A destination cleared for connection.
pub struct Cleared {
    pub addresses: Vec<SocketAddr>,
    pub reason: String,
}

type Answers = Mutex<HashMap<(String, u16), Arc<OnceCell<bool>>>>;

pub struct Gate {
    session_id: RwLock<String>,
    policy: RwLock<Arc<Policy>>,
    /// The host's answers, per destination, for the session's life.
    answers: Answers,
    /// The host as the session sees it (an engine network's gateways), or its cluster's API
    /// server: refused whatever the policy.
    gateways: Gateways,
}

/// Addresses the gate refuses besides the host's own, and what they are. An allow entry
/// naming their address opens them, unless they are refused `always` (a cluster's control
/// plane: no policy reaches it).
#[derive(Debug, Clone, Default)]
pub struct Gateways {
    pub addresses: Vec<IpAddr>,
    pub what: &'static str,
    pub always: bool,
}

impl Gate {
    pub fn new(session_id: &str, policy: Policy, gateways: Gateways) -> Gate {
        Gate {
            session_id: RwLock::new(session_id.to_string()),
            policy: RwLock::new(Arc::new(policy)),
            answers: Mutex::default(),
            gateways,
        }
    }

    pub fn policy(&self) -> Arc<Policy> {
        self.policy
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The session whose connections this gate decides.
    pub fn session_id(&self) -> String {
        self.session_id
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Makes this the gate of `session_id` (a warm pool member's relay, claimed): the
    /// answers the host gave for another session are forgotten.
    pub fn hand_to(&self, session_id: &str) {
        let mut current = self.session_id.write().unwrap_or_else(|e| e.into_inner());
        if *current != session_id {
            *current = session_id.to_string();
            self.answers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        }
    }

    /// Applies to connections made from now on.
    pub fn replace(&self, policy: Policy) {
        *self.policy.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(policy);
    }

    pub fn report(&self, event: EgressEvent) {
        if let Some(events) = &self.policy().events {
            events.event(event);
        }
    }

    /// Why `addr` is never public, counting this machine's own addresses and the engine's
    /// gateways.
    fn special(&self, addr: IpAddr) -> Option<String> {
        if let Some(kind) = special_kind(addr) {
            return Some(kind.to_string());
        }
        let plain = canonical(addr);
        if host_addresses()
            .into_iter()
            .any(|own| canonical(own) == plain)
        {
            return Some("an address of this host".into());
        }
        if self
            .gateways
            .addresses
            .iter()
            .any(|g| canonical(*g) == plain)
        {
            return Some(self.gateways.what.into());
        }
        None
    }

    /// Why one of `ips` is refused whatever the policy.
    fn refused_always(&self, ips: &[IpAddr]) -> Option<String> {
        let gateways = &self.gateways;
        let found = ips.iter().find(|ip| {
            gateways.always
                && gateways
                    .addresses
                    .iter()
                    .any(|g| canonical(*g) == canonical(**ip))
        })?;
        Some(format!(
            "{found} is {}, refused whatever the policy",
            gateways.what
        ))
    }

    /// The addresses to connect to, or why not.
    pub async fn check(&self, host: &str, port: u16) -> Result<Cleared, Denied> {
        self.check_at(host, port, None).await
    }

    /// As `check`, for a request that would go over a connection already open to
    /// `address` (cleared for `host:port` before): the policy decides on that address
    /// again, without a second lookup.
    pub async fn recheck(
        &self,
        host: &str,
        port: u16,
        address: SocketAddr,
    ) -> Result<Cleared, Denied> {
        self.check_at(host, port, Some(vec![address])).await
    }

    async fn check_at(
        &self,
        host: &str,
        port: u16,
        connected: Option<Vec<SocketAddr>>,
    ) -> Result<Cleared, Denied> {
        let policy = self.policy();
        if policy.mode == EgressMode::None {
            return Err(Denied::Refused("the session's egress is 'none'".into()));
        }
        if let Some(reason) = policy.rules.refuses_name(host, port) {
            return Err(Denied::Refused(reason));
        }
        let addresses = match connected.or_else(|| known_addresses(host, port, &policy)) {
            Some(addresses) => addresses,
            None => {
                if !policy.rules.lookup_could_allow(host, port) {
                    self.ask(&policy, host, port)
                        .await
                        .map_err(Denied::Refused)?;
                }
                lookup(host, port).await.map_err(Denied::Unresolved)?
            }
        };
        let ips: Vec<IpAddr> = addresses.iter().map(SocketAddr::ip).collect();
        if let Some(reason) = self.refused_always(&ips) {
            return Err(Denied::Refused(reason));
        }
        let reason = match policy.rules.decide(host, port, &ips, &|a| self.special(a)) {
            Decision::Allow => "allowed by the session's policy".to_string(),
            Decision::Refuse(reason) => return Err(Denied::Refused(reason)),
            Decision::Ask => self
                .ask(&policy, host, port)
                .await
                .map_err(Denied::Refused)?,
        };
        Ok(Cleared { addresses, reason })
    }

    async fn ask(&self, policy: &Policy, host: &str, port: u16) -> Result<String, String> {
        let Some(asker) = policy.asker.clone() else {
            return Err("not in the allow list (and no onRequest to ask)".into());
        };
        let cell = self
            .answers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry((host.to_string(), port))
            .or_default()
            .clone();
        let request = EgressRequest {
            session_id: self.session_id(),
            host: host.to_string(),
            port,
        };
        let wait = policy.ask_wait;
        let yes = *cell
            .get_or_init(|| async move {
                tokio::time::timeout(wait, asker.ask(request))
                    .await
                    .unwrap_or(false)
            })
            .await;
        match yes {
            true => Ok("allowed by onRequest".into()),
            false => Err("onRequest did not allow it".into()),
        }
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(addr),
        v4 => v4,
    }
}

/// The addresses of `host` known without a lookup: the policy's `hosts`, or an IP literal.
fn known_addresses(host: &str, port: u16, policy: &Policy) -> Option<Vec<SocketAddr>> {
    if let Some(pinned) = policy.hosts.get(host) {
        return Some(pinned.iter().map(|ip| SocketAddr::new(*ip, port)).collect());
    }
    host.trim_matches(|c| c == '[' || c == ']')
        .parse::<IpAddr>()
        .ok()
        .map(|ip| vec![SocketAddr::new(ip, port)])
}

/// The system resolver's addresses for `host`.
async fn lookup(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    match tokio::time::timeout(RESOLVE_WAIT, tokio::net::lookup_host((host, port))).await {
        Ok(Ok(found)) => {
            let mut all: Vec<SocketAddr> = found.collect();
            all.dedup();
            Ok(all)
        }
        Ok(Err(e)) => Err(format!("'{host}' does not resolve: {e}")),
        Err(_) => Err(format!(
            "resolving '{host}' took over {} s",
            RESOLVE_WAIT.as_secs()
        )),
    }
}

#[cfg(test)]
#[path = "destination_gate_tests.rs"]
mod tests;
