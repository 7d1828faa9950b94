//! Containers whose only network is the session relay: made with network mode `none` and
//! the proxy variables, their relay started each time they start here, their policy kept
//! per container for this process.

use std::collections::HashMap;
use std::sync::Mutex;

use super::container_config::ContainerConfig;
use crate::egress::{add_no_proxy, proxy_environment, Egress};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};

#[derive(Default)]
pub struct RelayedContainers(Mutex<HashMap<String, (String, Egress)>>);

/// The service set holder a container joins: its network is `container:<holder>` and it is
/// a member of that holder's set.
pub fn joined_holder(config: &ContainerConfig) -> Option<&str> {
    let holder = config.network.as_deref()?.strip_prefix("container:")?;
    (config.service_set.as_ref()?.holder == holder).then_some(holder)
}

/// Makes `config` a relayed container's: no network (or its service set's holder's, which
/// has none), the proxy variables. A network the caller named as well is a contradiction;
/// no agent to run the relay (`no_agent` says why) means the policy cannot be enforced.
pub fn prepare_relayed(
    config: &mut ContainerConfig,
    name: &str,
    no_agent: Option<&str>,
) -> Result<()> {
    let joined = joined_holder(config).is_some();
    if let Some(network) = config
        .network
        .as_deref()
        .filter(|n| !n.is_empty() && *n != "none" && !joined)
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
    if !joined {
        config.network = Some("none".into());
    }
    // Names the caller keeps off the proxy (a service set's, on the shared loopback) stay.
    let kept = config
        .environment
        .get("NO_PROXY")
        .cloned()
        .unwrap_or_default();
    config.environment.extend(proxy_environment());
    add_no_proxy(&mut config.environment, kept.split(','));
    Ok(())
}

/// A relayed container that joins a holder is as sealed as the holder: its network mode
/// must be `none` (our holders are made so; anything else would route around the relay).
pub async fn check_joined_holder(
    engine: &Engine,
    config: &ContainerConfig,
    name: &str,
) -> Result<()> {
    let Some(holder) = joined_holder(config) else {
        return Ok(());
    };
    let subject = format!("service holder '{holder}'");
    let inspected = engine.inspect_container(holder, &subject).await?;
    let mode = inspected
        .host_config
        .and_then(|h| h.network_mode)
        .unwrap_or_default();
    if mode == "none" {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::EgressUnavailable,
        format!(
            "container '{name}': it joins '{holder}', whose network is '{mode}', not 'none': its egress policy could not hold there"
        ),
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::container_runtime::SetMembership;

    #[test]
    fn only_its_own_sets_holder_may_stand_in_for_no_network() {
        let member = |network: &str, holder: &str| ContainerConfig {
            network: Some(network.into()),
            service_set: Some(SetMembership {
                holder: holder.into(),
                service: Some("app".into()),
            }),
            ..Default::default()
        };
        let mut joined = member("container:ws-svc", "ws-svc");
        prepare_relayed(&mut joined, "ws", None).unwrap();
        assert_eq!(joined.network.as_deref(), Some("container:ws-svc"));
        assert!(joined.environment.contains_key("HTTP_PROXY"));
        let mut other = member("container:elsewhere", "ws-svc");
        assert!(prepare_relayed(&mut other, "ws", None).is_err());
        let mut bridge = member("bridge", "ws-svc");
        assert!(prepare_relayed(&mut bridge, "ws", None).is_err());
        let mut plain = ContainerConfig {
            network: Some("container:ws-svc".into()),
            ..Default::default()
        };
        assert!(prepare_relayed(&mut plain, "ws", None).is_err());
    }
}
