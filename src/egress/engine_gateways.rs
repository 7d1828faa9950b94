//! The gateways of the engine's networks: the host as containers on them see it, which the
//! gate refuses like the host's own addresses. Without them those addresses would pass as
//! public, so a listing that fails, or a gateway that is not an address, refuses the relay.

use std::net::IpAddr;

use bollard::models::Network;

use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};

pub async fn engine_gateways(engine: &Engine) -> Result<Vec<IpAddr>> {
    let listed = engine
        .call(
            "the engine's networks",
            engine
                .docker()
                .list_networks(None::<bollard::query_parameters::ListNetworksOptions>),
        )
        .await;
    gateways_of(listed)
}

/// The gateways a listing names, or `EGRESS_UNAVAILABLE`.
fn gateways_of(listed: Result<Vec<Network>>) -> Result<Vec<IpAddr>> {
    let unavailable = |why: String| {
        Error::new(
            ErrorCode::EgressUnavailable,
            format!(
                "the session's egress cannot be enforced: {why}, so the host's addresses as \
                 containers see them are unknown"
            ),
        )
    };
    let networks = listed.map_err(|e| {
        unavailable(format!(
            "the engine's networks could not be listed ({})",
            e.message
        ))
    })?;
    let mut found = Vec::new();
    for config in networks
        .iter()
        .filter_map(|n| n.ipam.as_ref()?.config.as_ref())
        .flatten()
    {
        let Some(text) = config.gateway.as_deref().filter(|g| !g.is_empty()) else {
            continue;
        };
        let address = text.split_once('/').map_or(text, |(address, _)| address);
        match address.parse::<IpAddr>() {
            Ok(ip) => found.push(ip),
            Err(_) => {
                return Err(unavailable(format!(
                    "the engine names a network gateway '{text}' that is not an IP address"
                )))
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use bollard::models::{Ipam, IpamConfig};

    use super::*;

    fn network(gateways: &[&str]) -> Network {
        let config = gateways
            .iter()
            .map(|g| IpamConfig {
                gateway: Some(g.to_string()),
                ..Default::default()
            })
            .collect();
        Network {
            ipam: Some(Ipam {
                config: Some(config),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn gateways_are_read_from_every_network() {
        let listed = vec![
            network(&["172.17.0.1", "fd00::1"]),
            network(&["10.88.0.1/16", ""]),
            Network::default(),
        ];
        let found = gateways_of(Ok(listed)).unwrap();
        let expected: Vec<IpAddr> = ["172.17.0.1", "fd00::1", "10.88.0.1"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn a_failed_listing_or_a_gateway_that_is_no_address_refuses() {
        let failed = Err(Error::new(ErrorCode::EngineError, "500 from the engine"));
        let err = gateways_of(failed).unwrap_err();
        assert_eq!(err.code, ErrorCode::EgressUnavailable);
        assert!(err
            .message
            .contains("networks could not be listed (500 from the engine)"));
        let odd = gateways_of(Ok(vec![network(&["gateway.local"])])).unwrap_err();
        assert_eq!(odd.code, ErrorCode::EgressUnavailable);
        assert!(odd.message.contains("'gateway.local'"));
    }
}
