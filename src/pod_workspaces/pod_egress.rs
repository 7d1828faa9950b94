//! A Pod session's network: the Pod has no route out, and its egress relay (the agent's, on
//! an exec stream) carries every connection to this host, where the policy decides, as on
//! the engines. `'bridge'` has no meaning on a cluster and is refused; `'none'` runs the relay
//! where the agent can (a client is told why it is refused) and needs nothing where it cannot.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::pod_sessions::PodWorkspaces;
use crate::egress::{
    add_no_proxy, proxy_environment, Egress, EgressMode, EgressSpec, RelayChannel,
};
use crate::error::{Error, ErrorCode, Result};
use crate::workspace::{save_record, WorkspaceRecord};

/// `egress` unless it is one a session on a cluster cannot have.
fn checked(egress: Egress) -> Result<Egress> {
    if !egress.spec.relayed() {
        return Err(Error::new(
            ErrorCode::Unsupported,
            "egress 'bridge' is not offered on Kubernetes: a session Pod never has the cluster's network; give 'public', 'none' or a policy",
        ));
    }
    egress.compile()?;
    Ok(egress)
}

/// The egress of a session from before the relay reached the cluster: nothing out.
fn no_egress() -> Egress {
    Egress::of(EgressSpec::of(EgressMode::None))
}

impl PodWorkspaces {
    /// The Pod's variables: the session's own, and the relay's proxy variables (names the
    /// session keeps off the proxy kept, and its compose services', which are on its
    /// loopback).
    pub(super) fn pod_variables(&self, record: &WorkspaceRecord) -> BTreeMap<String, String> {
        let mut env = record.pod_env.clone();
        if record.pod_egress.is_some() {
            let kept = env.get("NO_PROXY").cloned().unwrap_or_default();
            env.extend(proxy_environment());
            add_no_proxy(&mut env, kept.split(','));
            if let Some(services) = &record.compose {
                let names = services.services.iter().map(|s| s.name.as_str());
                add_no_proxy(&mut env, names.chain([services.app_service.as_str()]));
            }
        }
        env
    }

    /// The egress a new session is created with: the request's, else the constructor's.
    pub(super) fn egress_for_new(&self, asked: Option<Egress>) -> Result<Egress> {
        checked(asked.unwrap_or_else(|| self.egress.clone()))
    }

    /// The session's egress: as this process set it, else as stored (with the constructor's
    /// callbacks); `None` for a session from before the relay (no route, no relay).
    pub(super) fn egress_of(&self, record: &WorkspaceRecord) -> Option<Egress> {
        self.egress_set
            .of(&record.session_id, record.pod_egress.clone(), &self.egress)
    }

    /// The relay of the session's running Pod, started under its egress (`'none'` for a
    /// session from before the relay: it then serves forwarded ports only).
    pub(super) async fn relay_channel(
        &self,
        record: &WorkspaceRecord,
    ) -> Result<Arc<RelayChannel>> {
        let egress = self.egress_of(record).unwrap_or_else(no_egress);
        self.start_relay(record, &egress).await
    }

    /// Starts the Pod's relay under `egress` (or gives a running one that policy), and points
    /// the session's forwarded ports there.
    async fn start_relay(
        &self,
        record: &WorkspaceRecord,
        egress: &Egress,
    ) -> Result<Arc<RelayChannel>> {
        let channel = self
            .runtime
            .attach_relay(&record.container_id, &record.session_id, egress)
            .await?;
        self.forwards.retarget(&record.session_id, &channel);
        Ok(channel)
    }

    /// The relay of the session's running Pod where it has an egress or forwarded ports.
    /// `EGRESS_UNAVAILABLE` where the agent cannot run it, unless the egress is `'none'` and
    /// nothing is forwarded.
    pub(super) async fn attach_relay(&self, record: &WorkspaceRecord) -> Result<()> {
        let forwarded = self.forwards.has(&record.session_id);
        let Some(egress) = self.egress_of(record).or_else(|| forwarded.then(no_egress)) else {
            return Ok(());
        };
        let optional = egress.spec.mode == EgressMode::None && !forwarded;
        match self.start_relay(record, &egress).await {
            Ok(_) => Ok(()),
            Err(err) if optional && err.code == ErrorCode::EgressUnavailable => {
                let pod = &record.container_id;
                tracing::info!("Pod '{pod}': no relay for egress 'none': {}", err.message);
                Ok(())
            }
            Err(err) if err.code == ErrorCode::EgressUnavailable => Err(Error::new(
                err.code,
                format!(
                    "{}; only egress 'none' does without the relay",
                    err.message.trim_end_matches('.')
                ),
            )),
            Err(err) => Err(err),
        }
    }

    /// Changes a session's egress for the connections it makes from now on.
    pub async fn set_egress(&self, session_id: &str, egress: Egress) -> Result<()> {
        let egress = checked(egress)?;
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        let mut record = self.required(session_id)?;
        if record.pod_egress.is_none() {
            return Err(Error::invalid_argument(format!(
                "session '{session_id}' was created before the relay reached Kubernetes: its Pod has no proxy, so its egress cannot change"
            )));
        }
        record.pod_egress = Some(egress.spec.clone());
        save_record(&self.base, &record)?;
        self.egress_set.remember(session_id, egress.clone());
        let running = self
            .runtime
            .set_egress(&record.container_id, &egress)
            .await?;
        if !running && self.state_of(&record.container_id).await? == "running" {
            self.attach_relay(&record).await?;
        }
        Ok(())
    }
}
