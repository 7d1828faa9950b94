//! A `KubernetesRuntime`'s network relays: one per Pod that has one, started in the Pod
//! (`pod_relay`), given its policy, and forgotten with the Pod's agent when the Pod stops.

use std::sync::Arc;

use kube::Api;

use super::super::cluster_client::Cluster;
use super::super::pod_relay::PodRelays;
use super::KubernetesRuntime;
use crate::egress::{ensure_relay, forget_relay, Egress, RelayChannel};
use crate::error::Result;

impl KubernetesRuntime {
    /// The namespace's Pods as the place their network relays run.
    async fn relay_place(&self) -> Result<PodRelays<'_>> {
        Ok(self.relays_on(self.cluster().await?))
    }

    fn relays_on<'a>(&'a self, cluster: &'a Cluster) -> PodRelays<'a> {
        PodRelays {
            cluster,
            pods: Api::namespaced(cluster.client.clone(), &cluster.namespace),
            agents: &self.agents,
        }
    }

    /// Starts Pod `id`'s network relay under `egress` (or gives a running one that policy).
    pub async fn attach_relay(
        &self,
        id: &str,
        session_id: &str,
        egress: &Egress,
    ) -> Result<Arc<RelayChannel>> {
        ensure_relay(&self.relay_place().await?, id, session_id, egress).await
    }

    /// Gives Pod `id`'s running relay `egress` for new connections; false when none runs here.
    pub async fn set_egress(&self, id: &str, egress: &Egress) -> Result<bool> {
        crate::egress::set_egress(&self.relay_place().await?, id, egress).await
    }

    /// Forgets what this process holds on a Pod that stopped or is gone: its agent, its relay.
    pub(super) fn forget_pod(&self, id: &str) {
        self.agents.forget(id);
        if let Some(cluster) = self.cluster.get() {
            forget_relay(&self.relays_on(cluster), id);
        }
    }
}
