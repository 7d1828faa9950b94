//! The session relay in a Pod: `agent relay` on an exec stream of its own (no direct line
//! reaches a node), once the agent's binary is delivered. The gate refuses the API server's
//! addresses besides the host's own: a session's connection never reaches its cluster's
//! control plane, whatever the policy allows.

use std::net::IpAddr;
use std::time::Duration;

use futures_util::future::BoxFuture;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use super::cluster_client::Cluster;
use super::pod_agent::{open_exec_channel, PodAgents, AGENT_PATH, NO_LINE};
use crate::egress::{Gateways, OpenedRelay, RelayChannel, RelayPlace};
use crate::error::{Error, ErrorCode, Result};

/// A cluster namespace's Pods as the place their relays run.
pub struct PodRelays<'a> {
    pub cluster: &'a Cluster,
    pub pods: Api<Pod>,
    pub agents: &'a PodAgents,
}

impl RelayPlace for PodRelays<'_> {
    fn place(&self) -> String {
        format!(
            "kubernetes {} namespace {}",
            self.cluster.server, self.cluster.namespace
        )
    }

    fn open<'a>(
        &'a self,
        container: &'a str,
        ports: &'a [u16],
        limits: (usize, Duration),
    ) -> BoxFuture<'a, Result<OpenedRelay>> {
        Box::pin(async move {
            if let Err(why) = self.agents.delivered(&self.pods, container).await? {
                return Err(Error::new(
                    ErrorCode::EgressUnavailable,
                    format!("the network relay in Pod '{container}' cannot run: the agent {why}"),
                ));
            }
            let mut argv = vec![AGENT_PATH.to_string(), "relay".to_string()];
            argv.extend(ports.iter().map(u16::to_string));
            let what = format!("start the network relay in Pod '{container}'");
            let channel = open_exec_channel(&self.pods, container, argv, &what).await?;
            RelayChannel::over(channel, container, limits, NO_LINE.to_string()).await
        })
    }

    fn gateways(&self) -> BoxFuture<'_, Result<Gateways>> {
        Box::pin(async move {
            Ok(Gateways {
                addresses: api_server_addresses(&self.cluster.server).await?,
                what: "the cluster's API server",
                always: true,
            })
        })
    }
}

/// The addresses the API server's URL names (its host resolved as this machine resolves it).
async fn api_server_addresses(server: &str) -> Result<Vec<IpAddr>> {
    let unavailable = |why: String| {
        Error::new(
            ErrorCode::EgressUnavailable,
            format!(
                "the session's egress cannot be enforced: the API server {server} {why}, so the gate cannot refuse it"
            ),
        )
    };
    let url = url::Url::parse(server).map_err(|e| unavailable(format!("is not a URL ({e})")))?;
    let port = url.port_or_known_default().unwrap_or(443);
    let host = match url.host() {
        Some(url::Host::Ipv4(ip)) => return Ok(vec![IpAddr::V4(ip)]),
        Some(url::Host::Ipv6(ip)) => return Ok(vec![IpAddr::V6(ip)]),
        Some(url::Host::Domain(name)) => name.to_string(),
        None => return Err(unavailable("names no host".into())),
    };
    let found = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| unavailable(format!("could not be resolved ({e})")))?;
    Ok(found.map(|address| address.ip()).collect())
}

#[cfg(test)]
mod tests {
    use super::api_server_addresses;

    #[tokio::test]
    async fn the_api_servers_addresses_are_its_urls_host() {
        let v4 = api_server_addresses("https://10.160.0.1:6443")
            .await
            .unwrap();
        assert_eq!(v4, vec!["10.160.0.1".parse::<std::net::IpAddr>().unwrap()]);
        let v6 = api_server_addresses("https://[fd00::1]:6443")
            .await
            .unwrap();
        assert_eq!(v6, vec!["fd00::1".parse::<std::net::IpAddr>().unwrap()]);
        let local = api_server_addresses("https://localhost:6443")
            .await
            .unwrap();
        assert!(local.iter().all(|a| a.is_loopback()) && !local.is_empty());
        assert!(api_server_addresses("not a url").await.is_err());
    }
}
