//! A session's network: the egress a new session gets (the host's `network` choice keeps
//! the engine's network, a config's never widens it), its relay attached whenever its
//! container runs here, its policy changed while it runs, and its ports forwarded to the
//! host through the same relay.

use std::net::IpAddr;
use std::sync::Arc;

use super::workspace_record::{self as record, WorkspaceRecord};
use super::workspaces::{CreateWorkspace, Workspaces};
use crate::egress::{forward_port, Egress, EgressMode, EgressSpec, PortForward, RelayChannel};
use crate::error::{Error, Result};
use crate::session_settings::SessionSettings;

impl Workspaces {
    /// The egress a new session is created with.
    pub(super) fn egress_for_new(&self, request: &CreateWorkspace) -> Result<Egress> {
        let network = request
            .network
            .as_deref()
            .filter(|n| !n.is_empty() && *n != "none");
        match (&request.egress, network) {
            (Some(egress), Some(network)) if egress.spec.relayed() => Err(Error::invalid_argument(format!(
                "session '{}': network '{network}' and egress {} exclude each other (egress 'bridge' keeps the engine's network)",
                request.session_id,
                egress.spec.describe()
            ))),
            (Some(egress), _) => Ok(egress.clone()),
            (None, Some(_)) => Ok(Egress::of(EgressSpec::of(EgressMode::Bridge))),
            (None, None) => Ok(self.options.egress.clone()),
        }
        .and_then(|egress| egress.compile().map(|_| egress))
    }

    /// Fixes `egress` in a new session's settings: under the relay the container has no
    /// network, whatever the config's `runArgs --network` (trusted or not) said.
    pub(super) fn settle_egress(
        &self,
        session_id: &str,
        settings: &mut SessionSettings,
        egress: Egress,
    ) {
        if egress.spec.relayed() {
            if let Some(network) = settings.network.take().filter(|n| n != "none") {
                settings.warnings.push(format!(
                    "runArgs --network {network} is not applied: the session's egress is {} (the host gives egress 'bridge' to use the engine's network)",
                    egress.spec.describe()
                ));
            }
        }
        settings.egress = Some(egress.spec.clone());
        self.egress.remember(session_id, egress);
    }

    /// The session's egress: as this process set it, else as stored (with the
    /// constructor's callbacks); `None` for a record from before egress existed.
    pub(super) fn egress_of(&self, record: &WorkspaceRecord) -> Option<Egress> {
        let stored = record.settings.as_ref()?.egress.clone();
        self.egress
            .of(&record.session_id, stored, &self.options.egress)
    }

    /// Starts the relay of a relayed session's running container (or gives it the current
    /// policy); the channel, or `None` for a session on the engine's network.
    pub(super) async fn attach_relay(
        &self,
        record: &WorkspaceRecord,
    ) -> Result<Option<Arc<RelayChannel>>> {
        match self.egress_of(record).filter(|e| e.spec.relayed()) {
            Some(egress) => self
                .runtime
                .attach_relay(&record.container_id, &record.session_id, egress)
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    /// Changes a session's egress for the connections it makes from now on. Whether the
    /// container has a network at all is fixed when it is made.
    pub async fn set_egress(&self, session_id: &str, egress: Egress) -> Result<()> {
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        let mut record = self.required(session_id)?;
        egress.compile()?;
        let Some(settings) = record.settings.as_mut() else {
            return Err(Error::invalid_argument(format!(
                "session '{session_id}' was created before egress policies existed: its network cannot change"
            )));
        };
        let was = settings
            .egress
            .clone()
            .unwrap_or(EgressSpec::of(EgressMode::Bridge));
        if was.relayed() != egress.spec.relayed() {
            return Err(Error::invalid_argument(format!(
                "session '{session_id}': egress {} cannot become {}: whether the container has the engine's network is fixed when it is made",
                was.describe(),
                egress.spec.describe()
            )));
        }
        settings.egress = Some(egress.spec.clone());
        record::save(&self.options.base_dir, &record)?;
        self.egress.remember(session_id, egress.clone());
        if egress.spec.relayed() {
            self.runtime
                .set_egress(&record.container_id, egress)
                .await?;
        }
        Ok(())
    }

    /// Serves the container's `container_port` on `host_ip:host_port` (0: a free port),
    /// through the relay, until `close` or the session's end.
    pub async fn forward_port(
        &self,
        session_id: &str,
        container_port: u16,
        host_ip: IpAddr,
        host_port: u16,
    ) -> Result<Arc<PortForward>> {
        let record = self.required(session_id)?;
        self.start_session(session_id).await?;
        let channel = self.relay_for_forwarding(&record).await?;
        let host = (host_ip, host_port);
        self.forwards
            .open(session_id, channel, container_port, host)
            .await
    }

    /// Serves devcontainer.json's `forwardPorts` and `appPort` once per session in this
    /// process: on the host port asked for (or the same number) where it is free, else on
    /// any free port (`WorkspaceInfo.ports` says which).
    pub(super) async fn forward_configured(&self, record: &WorkspaceRecord) -> Result<()> {
        let Some(settings) = record.settings.as_ref().filter(|s| !s.ports.is_empty()) else {
            return Ok(());
        };
        let session = &record.session_id;
        if self.forwards.has(session) {
            return Ok(());
        }
        let channel = self.relay_for_forwarding(record).await?;
        let loopback = IpAddr::from(std::net::Ipv4Addr::LOCALHOST);
        let mut opened = Vec::new();
        for request in &settings.ports {
            let wanted = request.host_port.unwrap_or(request.container_port);
            let forward =
                match forward_port(channel.clone(), request.container_port, loopback, wanted).await
                {
                    Ok(forward) => forward,
                    Err(_) => {
                        forward_port(channel.clone(), request.container_port, loopback, 0).await?
                    }
                };
            opened.push(Arc::new(forward));
        }
        self.forwards.add(session, opened);
        Ok(())
    }

    /// The relay channel of a running session, started without listeners for a session on
    /// the engine's network.
    async fn relay_for_forwarding(&self, record: &WorkspaceRecord) -> Result<Arc<RelayChannel>> {
        match self.attach_relay(record).await? {
            Some(channel) => Ok(channel),
            None => {
                let bridge = Egress::of(EgressSpec::of(EgressMode::Bridge));
                self.runtime
                    .attach_relay(&record.container_id, &record.session_id, bridge)
                    .await
            }
        }
    }

    /// The session's forwards, pointed at the relay of its container made again.
    pub(super) async fn retarget_forwards(&self, record: &WorkspaceRecord) -> Result<()> {
        if !self.forwards.has(&record.session_id) {
            return Ok(());
        }
        let channel = self.relay_for_forwarding(record).await?;
        self.forwards.retarget(&record.session_id, &channel);
        Ok(())
    }

    /// Which way the frames of the session's relay travel, when this process runs it.
    pub async fn relay_line(&self, session_id: &str) -> Result<Option<crate::agent::Line>> {
        let record = self.required(session_id)?;
        let engine = self.runtime.engine().await?;
        Ok(crate::egress::relay_line(&engine, &record.container_id).await)
    }

    /// The ports this process serves for the session.
    pub(super) fn forwarded(&self, session_id: &str) -> Vec<(u16, std::net::SocketAddr)> {
        self.forwards.listed(session_id)
    }

    /// Closes the session's forwarded ports.
    pub(super) fn close_forwards(&self, session_id: &str) {
        self.forwards.close(session_id);
    }
}
