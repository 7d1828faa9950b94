//! What a host asks for a session's network: the mode and lists it gives (kept with the
//! session, so a later process enforces the same), the callbacks it may add, and the form
//! the relay checks against (`Policy`), made once per change.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::egress_policy::Rules;
use crate::error::{Error, Result};

/// Concurrent relayed connections of one session, unless the host says otherwise.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 256;
/// A relayed connection with no byte either way for this long is closed.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(600);
/// How long the host's `onRequest` may take before its silence means no.
pub const DEFAULT_ASK_WAIT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EgressMode {
    /// No connection at all.
    None,
    /// Any destination on the public internet.
    #[default]
    Public,
    /// The engine's own network, as the host chose it: no relay in the way.
    Bridge,
    /// The host's allow and deny lists (and its `onRequest`).
    Policy,
}

/// The serialisable part of a session's egress.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EgressSpec {
    pub mode: EgressMode,
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    /// Names resolved to these addresses for this session instead of by the system.
    #[serde(default)]
    pub hosts: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub max_connections: Option<u32>,
    #[serde(default)]
    pub idle_timeout_ms: Option<u64>,
    /// How long `onRequest` may take to answer, when not `DEFAULT_ASK_WAIT`.
    #[serde(default)]
    pub ask_timeout_ms: Option<u64>,
}

impl EgressMode {
    /// The mode a host names as a string; INVALID_ARGUMENT for any other name (a policy
    /// is given as an object, not by name).
    pub fn from_name(name: &str) -> Result<EgressMode> {
        match name {
            "none" => Ok(EgressMode::None),
            "public" => Ok(EgressMode::Public),
            "bridge" => Ok(EgressMode::Bridge),
            other => Err(invalid(format!(
                "egress '{other}' is not 'none', 'public', 'bridge' or a policy object"
            ))),
        }
    }
}

impl EgressSpec {
    pub fn of(mode: EgressMode) -> EgressSpec {
        EgressSpec {
            mode,
            ..Default::default()
        }
    }

    /// Whether the session's container runs without a network, behind the relay.
    pub fn relayed(&self) -> bool {
        self.mode != EgressMode::Bridge
    }

    pub fn describe(&self) -> String {
        match self.mode {
            EgressMode::None => "'none'".into(),
            EgressMode::Public => "'public'".into(),
            EgressMode::Bridge => "'bridge'".into(),
            EgressMode::Policy => format!(
                "allow [{}], deny [{}]",
                self.allow.join(", "),
                self.deny.join(", ")
            ),
        }
    }
}

/// A destination the lists leave open, as `onRequest` is asked about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressRequest {
    pub session_id: String,
    pub host: String,
    pub port: u16,
}

/// One relayed request or tunnel, reported when it ends.
#[derive(Debug, Clone, PartialEq)]
pub struct EgressEvent {
    pub session_id: String,
    pub host: String,
    pub port: u16,
    pub address: Option<String>,
    pub allowed: bool,
    pub reason: String,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub ms: f64,
}

pub type AskFuture = Pin<Box<dyn Future<Output = bool> + Send>>;

/// The host's `onRequest`: the answer, or `false` for a callback that failed.
pub trait EgressAsker: Send + Sync {
    fn ask(&self, request: EgressRequest) -> AskFuture;
}

/// The host's `onEvent`.
pub trait EgressEvents: Send + Sync {
    fn event(&self, event: EgressEvent);
}

/// A session's egress as the host gave it.
#[derive(Clone, Default)]
pub struct Egress {
    pub spec: EgressSpec,
    pub asker: Option<Arc<dyn EgressAsker>>,
    pub events: Option<Arc<dyn EgressEvents>>,
}

impl std::fmt::Debug for Egress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Egress")
            .field("spec", &self.spec)
            .field("asker", &self.asker.is_some())
            .field("events", &self.events.is_some())
            .finish()
    }
}

/// What the relay checks each connection against.
pub struct Policy {
    pub mode: EgressMode,
    pub rules: Rules,
    pub hosts: HashMap<String, Vec<IpAddr>>,
    pub asker: Option<Arc<dyn EgressAsker>>,
    /// How long `asker` may take before its silence means no.
    pub ask_wait: Duration,
    pub events: Option<Arc<dyn EgressEvents>>,
}

impl Egress {
    pub fn of(spec: EgressSpec) -> Egress {
        Egress {
            spec,
            ..Default::default()
        }
    }

    /// A stored session's egress, with the callbacks of `callbacks` (the constructor's: the
    /// ones its creator gave are gone with its process).
    pub fn restored(spec: EgressSpec, callbacks: &Egress) -> Egress {
        Egress {
            spec,
            asker: callbacks.asker.clone(),
            events: callbacks.events.clone(),
        }
    }

    /// The checked form; `INVALID_ARGUMENT` for an entry or address that does not parse.
    pub fn compile(&self) -> Result<Policy> {
        let spec = &self.spec;
        let rules = match spec.mode {
            EgressMode::Public => Rules::public(),
            _ => Rules::parse(&spec.allow, &spec.deny).map_err(invalid)?,
        };
        let mut hosts = HashMap::new();
        for (name, addresses) in &spec.hosts {
            let parsed = addresses
                .iter()
                .map(|a| {
                    a.trim_matches(|c| c == '[' || c == ']')
                        .parse::<IpAddr>()
                        .map_err(|_| {
                            invalid(format!(
                                "egress hosts: '{a}' (for '{name}') is not an IP address"
                            ))
                        })
                })
                .collect::<Result<Vec<_>>>()?;
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            hosts.insert(name, parsed);
        }
        if spec.max_connections == Some(0) {
            return Err(invalid("egress maxConnections must be at least 1".into()));
        }
        Ok(Policy {
            mode: spec.mode,
            rules,
            hosts,
            asker: self.asker.clone(),
            ask_wait: spec
                .ask_timeout_ms
                .map(Duration::from_millis)
                .unwrap_or(DEFAULT_ASK_WAIT),
            events: self.events.clone(),
        })
    }

    /// This egress's bounds with no destination allowed and no host to ask: what a warm
    /// pool member's relay holds until a session claims it.
    pub fn held(&self) -> Egress {
        Egress::of(EgressSpec {
            mode: EgressMode::None,
            max_connections: self.spec.max_connections,
            idle_timeout_ms: self.spec.idle_timeout_ms,
            ..Default::default()
        })
    }

    pub fn max_connections(&self) -> usize {
        self.spec.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS) as usize
    }

    pub fn idle(&self) -> Duration {
        self.spec
            .idle_timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_IDLE)
    }
}

fn invalid(message: String) -> Error {
    Error::invalid_argument(message)
}
