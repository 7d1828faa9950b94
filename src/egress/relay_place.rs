//! Where a session's relay runs: an engine's containers or a cluster's Pods. A place names
//! itself among this process's relays, starts `agent relay` in one of its containers, and
//! says which addresses are the host as its containers see it (the gate refuses them).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use super::destination_gate::Gateways;
use super::engine_gateways::engine_gateways;
use super::relay_channel::{Accepted, RelayChannel};
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::AGENT_MOUNT;

/// A started relay: its channel and the connections accepted in the container.
pub type OpenedRelay = (Arc<RelayChannel>, mpsc::UnboundedReceiver<Accepted>);

pub trait RelayPlace: Send + Sync {
    /// The place among all of this process's relays: an engine's endpoint, a cluster's
    /// server and namespace.
    fn place(&self) -> String;

    /// Starts the relay in `container`, listening on `ports`, with at most `limits.0`
    /// streams open, each closed after `limits.1` idle.
    fn open<'a>(
        &'a self,
        container: &'a str,
        ports: &'a [u16],
        limits: (usize, Duration),
    ) -> BoxFuture<'a, Result<OpenedRelay>>;

    /// What the gate refuses besides the host's own addresses: the host as the place's
    /// containers see it, the place's control plane.
    fn gateways(&self) -> BoxFuture<'_, Result<Gateways>>;
}

impl RelayPlace for Engine {
    fn place(&self) -> String {
        self.endpoint().to_string()
    }

    fn open<'a>(
        &'a self,
        container: &'a str,
        ports: &'a [u16],
        (max_streams, idle): (usize, Duration),
    ) -> BoxFuture<'a, Result<OpenedRelay>> {
        Box::pin(RelayChannel::start(
            self,
            container,
            AGENT_MOUNT,
            ports,
            max_streams,
            idle,
        ))
    }

    fn gateways(&self) -> BoxFuture<'_, Result<Gateways>> {
        Box::pin(async move {
            Ok(Gateways {
                addresses: engine_gateways(self).await?,
                what: "an engine network's gateway",
                always: false,
            })
        })
    }
}
