//! Containers whose only network is the session relay: made with network mode `none` and
//! the proxy variables, their relay started each time they start here, their policy kept
//! per container for this process.

use std::collections::HashMap;
use std::sync::Mutex;

use super::container_config::ContainerConfig;
use crate::egress::{proxy_environment, Egress};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};

#[derive(Default)]
pub struct RelayedContainers(Mutex<HashMap<String, (String, Egress)>>);

/// Makes `config` a relayed container's: no network, the proxy variables. A network the
/// caller named as well is a contradiction; no agent to run the relay (`no_agent` says why)
/// means the policy cannot be enforced.
pub fn prepare_relayed(
    config: &mut ContainerConfig,
    name: &str,
    no_agent: Option<&str>,
) -> Result<()> {
    if let Some(network) = config
        .network
        .as_deref()
        .filter(|n| !n.is_empty() && *n != "none")
    {
        return Err(Error::invalid_argument(format!(
            "container '{name}': network '{network}' and an egress policy exclude each other (egress 'bridge' keeps the engine's network)"
        )));
    }
    if let Some(why) = no_agent {
        return Err(Error::new(
            ErrorCode::EgressUnavailable,
            format!(
                "container '{name}': its egress policy needs the session agent in the container, and none can run there ({why}); use egress 'bridge' to keep the engine's network"
            ),
        ));
    }
    config.network = Some("none".into());
    config.environment.extend(proxy_environment());
    Ok(())
}

impl RelayedContainers {
    pub fn remember(&self, container: &str, session_id: &str, egress: Egress) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(container.to_string(), (session_id.to_string(), egress));
    }

    pub fn get(&self, container: &str) -> Option<(String, Egress)> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(container)
            .cloned()
    }

    pub fn forget(&self, engine: &Engine, container: &str) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(container);
        crate::egress::forget_relay(engine, container);
    }
}
