//! The ports a process serves for its sessions, by session: added as they are forwarded,
//! listed for `WorkspaceInfo.ports`, pointed at a session's new relay when its container is
//! made or started again, and closed with the session.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use super::port_forward::{forward_port, PortForward};
use super::relay_channel::RelayChannel;
use crate::error::Result;

#[derive(Default)]
pub struct SessionForwards(Mutex<HashMap<String, Vec<Arc<PortForward>>>>);

impl SessionForwards {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, Vec<Arc<PortForward>>>) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Serves `container_port` through `channel` on `host_ip:host_port` (0: a free port), as
    /// one of the session's forwards.
    pub async fn open(
        &self,
        session_id: &str,
        channel: Arc<RelayChannel>,
        container_port: u16,
        (host_ip, host_port): (IpAddr, u16),
    ) -> Result<Arc<PortForward>> {
        let forward = Arc::new(forward_port(channel, container_port, host_ip, host_port).await?);
        self.add(session_id, [forward.clone()]);
        Ok(forward)
    }

    pub fn add(&self, session_id: &str, forwards: impl IntoIterator<Item = Arc<PortForward>>) {
        self.with(|all| {
            all.entry(session_id.to_string())
                .or_default()
                .extend(forwards)
        });
    }

    /// Whether the session has any forward here.
    pub fn has(&self, session_id: &str) -> bool {
        self.with(|all| all.contains_key(session_id))
    }

    /// (container port, host address) of each of the session's forwards.
    pub fn listed(&self, session_id: &str) -> Vec<(u16, SocketAddr)> {
        self.with(|all| {
            all.get(session_id)
                .map(|forwards| {
                    forwards
                        .iter()
                        .map(|f| (f.container_port, f.host_address))
                        .collect()
                })
                .unwrap_or_default()
        })
    }

    /// Points the session's forwards at `channel`, its container's new relay.
    pub fn retarget(&self, session_id: &str, channel: &Arc<RelayChannel>) {
        let forwards = self.with(|all| all.get(session_id).cloned().unwrap_or_default());
        for forward in forwards {
            forward.retarget(channel.clone());
        }
    }

    /// Stops the session's forwards listening.
    pub fn close(&self, session_id: &str) {
        let closed = self.with(|all| all.remove(session_id));
        for forward in closed.into_iter().flatten() {
            forward.close();
        }
    }
}
