//! A Pod session's ports served on the host: through its relay (the Pod needs no network for
//! it), closed by `close()`, `stop` or `destroy`, and pointed at the new relay when the Pod
//! starts again.

use std::net::IpAddr;
use std::sync::Arc;

use super::pod_sessions::PodWorkspaces;
use crate::egress::PortForward;
use crate::error::Result;

impl PodWorkspaces {
    /// Serves the Pod's `container_port` on `host_ip:host_port` (0: a free port).
    pub async fn forward_port(
        &self,
        session_id: &str,
        container_port: u16,
        host_ip: IpAddr,
        host_port: u16,
    ) -> Result<Arc<PortForward>> {
        let record = self.required(session_id)?;
        {
            let lock = self.lock_for(session_id);
            let _guard = lock.lock().await;
            self.ensure_running(&record).await?;
        }
        let channel = self.relay_channel(&record).await?;
        let host = (host_ip, host_port);
        self.forwards
            .open(session_id, channel, container_port, host)
            .await
    }
}
