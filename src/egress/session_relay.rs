//! The relays of this process, one per container: started when a relayed session's
//! container runs here, its policy replaced in place by `set_egress`, started again after
//! the container (and so the relay) stopped. A later process that attaches to the same
//! session starts its own, which replaces this one inside the container.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use super::destination_gate::Gate;
use super::egress_settings::Egress;
use super::proxy_connection;
use super::relay_channel::RelayChannel;
use super::relay_place::RelayPlace;
use crate::agent::Line;
use crate::error::{Error, ErrorCode, Result};

/// The relay's ports on the container's loopback: the HTTP proxy, then SOCKS5.
pub const HTTP_PROXY_PORT: u16 = 3128;
pub const SOCKS_PORT: u16 = 1080;

struct SessionRelay {
    channel: Arc<RelayChannel>,
    gate: Arc<Gate>,
}

type Cell = Arc<tokio::sync::Mutex<Option<SessionRelay>>>;

fn relays() -> &'static Mutex<HashMap<(String, String), Cell>> {
    static RELAYS: OnceLock<Mutex<HashMap<(String, String), Cell>>> = OnceLock::new();
    RELAYS.get_or_init(Default::default)
}

fn cell(place: &dyn RelayPlace, container: &str) -> Cell {
    relays()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry((place.place(), container.to_string()))
        .or_default()
        .clone()
}

/// What a relayed session's container gets in its environment, so that curl, git, npm,
/// pip and apt use the relay unchanged.
pub fn proxy_environment() -> BTreeMap<String, String> {
    let http = format!("http://127.0.0.1:{HTTP_PROXY_PORT}");
    let socks = format!("socks5h://127.0.0.1:{SOCKS_PORT}");
    let none = "localhost,127.0.0.1,::1".to_string();
    let mut env = BTreeMap::new();
    for (name, value) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
        ("NO_PROXY", &none),
    ] {
        env.insert(name.to_string(), value.clone());
        env.insert(name.to_ascii_lowercase(), value.clone());
    }
    env
}

/// Adds `names` to `env`'s `NO_PROXY` and `no_proxy`, each name once.
pub fn add_no_proxy<'a>(
    env: &mut BTreeMap<String, String>,
    names: impl IntoIterator<Item = &'a str>,
) {
    let names: Vec<&str> = names.into_iter().filter(|n| !n.is_empty()).collect();
    for key in ["NO_PROXY", "no_proxy"] {
        let mut list: Vec<String> = env
            .get(key)
            .map(|v| {
                v.split(',')
                    .filter(|n| !n.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        for name in &names {
            if !list.iter().any(|l| l == name) {
                list.push(name.to_string());
            }
        }
        env.insert(key.to_string(), list.join(","));
    }
}

/// Starts `container`'s relay under `egress` unless it runs already, in which case its
/// policy becomes `egress`. `EGRESS_UNAVAILABLE` when the agent cannot run the relay there.
pub async fn ensure_relay(
    place: &dyn RelayPlace,
    container: &str,
    session_id: &str,
    egress: &Egress,
) -> Result<Arc<RelayChannel>> {
    let policy = egress.compile()?;
    let cell = cell(place, container);
    let mut slot = cell.lock().await;
    // A relay started with other bounds (a pool member's, for other settings) is replaced.
    let same_bounds = |r: &&SessionRelay| {
        r.channel.max_streams == egress.max_connections() && r.channel.idle == egress.idle()
    };
    if let Some(relay) = slot
        .as_ref()
        .filter(|r| !r.channel.is_closed())
        .filter(same_bounds)
    {
        relay.gate.hand_to(session_id);
        relay.gate.replace(policy);
        return Ok(relay.channel.clone());
    }
    // A relay without listeners (forwarded ports only) never puts anything to its gate.
    let (ports, gateways) = match egress.spec.relayed() {
        true => (vec![HTTP_PROXY_PORT, SOCKS_PORT], place.gateways().await?),
        false => (Vec::new(), Default::default()),
    };
    let limits = (egress.max_connections(), egress.idle());
    let (channel, mut accepted) = place
        .open(container, &ports, limits)
        .await
        .map_err(|e| Error::new(ErrorCode::EgressUnavailable, e.message))?;
    let gate = Arc::new(Gate::new(session_id, policy, gateways));
    let serving = gate.clone();
    tokio::spawn(async move {
        while let Some(connection) = accepted.recv().await {
            tokio::spawn(proxy_connection::serve(connection, serving.clone()));
        }
    });
    *slot = Some(SessionRelay {
        channel: channel.clone(),
        gate,
    });
    Ok(channel)
}

/// Replaces the policy of `container`'s running relay; false when none runs here.
pub async fn set_egress(place: &dyn RelayPlace, container: &str, egress: &Egress) -> Result<bool> {
    let policy = egress.compile()?;
    let cell = cell(place, container);
    let slot = cell.lock().await;
    match slot.as_ref().filter(|r| !r.channel.is_closed()) {
        Some(relay) => {
            relay.gate.replace(policy);
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Files `from`'s relay under `to`: a warm pool member, renamed to the session that claimed
/// it, keeps the relay started with it (its policy then given by `ensure_relay`).
pub fn move_relay(place: &dyn RelayPlace, from: &str, to: &str) {
    let endpoint = place.place();
    let mut relays = relays().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cell) = relays.remove(&(endpoint.clone(), from.to_string())) {
        // Uncontended at a claim: the member's relay has served nothing yet.
        if let Ok(slot) = cell.try_lock() {
            if let Some(relay) = slot.as_ref() {
                relay.channel.rename(to);
            }
        }
        relays.insert((endpoint, to.to_string()), cell);
    }
}

/// Forgets `container`'s relay (its container is being removed), closing its channel (and
/// its line's socket) now.
pub fn forget_relay(place: &dyn RelayPlace, container: &str) {
    let cell = relays()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&(place.place(), container.to_string()));
    let Some(cell) = cell else { return };
    if let Ok(slot) = cell.try_lock() {
        if let Some(relay) = slot.as_ref() {
            relay.channel.close();
        }
    };
}

/// Which way the frames of `container`'s running relay travel; `None` when none runs here.
pub async fn relay_line(place: &dyn RelayPlace, container: &str) -> Option<Line> {
    let cell = relays()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(place.place(), container.to_string()))
        .cloned()?;
    let slot = cell.lock().await;
    slot.as_ref()
        .filter(|r| !r.channel.is_closed())
        .map(|r| r.channel.line())
}
