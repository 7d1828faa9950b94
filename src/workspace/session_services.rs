//! A compose session's other services around its container (`crate::compose_services`):
//! started before the container is made or started (every dependency ready), and joined by
//! it (`service_teardown` stops and removes them). A session without them has nothing here.

use super::session_container::SessionContainer;
use crate::compose_services::{
    start_service_set, ServiceSet, ServiceSetSpec, StoredServices, DEFAULT_READY_TIMEOUT,
};
use crate::container_runtime::ContainerConfig;
use crate::egress::add_no_proxy;
use crate::error::{Error, Result};
use crate::runtime::Lifetime;

impl SessionContainer<'_> {
    /// The set's description; its holder runs the image the session's container is made
    /// from (present wherever the session can be made).
    fn set_spec(&self, stored: &StoredServices, lifetime: Lifetime) -> ServiceSetSpec {
        let record = self.record;
        let image = record.checkpoint_image.as_deref();
        ServiceSetSpec {
            session_id: record.session_id.clone(),
            container: record.container_id.clone(),
            app_service: stored.app_service.clone(),
            app_depends_on: stored.app_depends_on.clone(),
            holder_image: image.unwrap_or(self.settings.run_image()).to_string(),
            services: stored.services.clone(),
            lifetime,
            limits: self.settings.resources,
            clone_path: Some(record.clone_path.clone()),
            project_dir: Some(record.project_dir.clone()),
            ready_timeout: DEFAULT_READY_TIMEOUT,
            progress: self.supply.progress.clone(),
        }
    }

    /// Brings the session's services up and makes `config` (its container's) join them;
    /// `None` for a session without services.
    pub(super) async fn start_services_for(
        &self,
        config: &mut ContainerConfig,
        lifetime: Lifetime,
    ) -> Result<Option<ServiceSet>> {
        let Some(stored) = &self.record.compose else {
            return Ok(None);
        };
        if !self.egress.as_ref().is_some_and(|e| e.spec.relayed()) {
            return Err(Error::invalid_argument(format!(
                "session '{}': a compose session's services share one sealed namespace, reached only through the relay; egress 'bridge' cannot hold there",
                self.record.session_id
            )));
        }
        let set = start_service_set(self.runtime, &self.set_spec(stored, lifetime)).await?;
        set.join(config, &stored.app_service);
        let names = stored.services.iter().map(|s| s.name.as_str());
        let names = std::iter::once(stored.app_service.as_str()).chain(names);
        add_no_proxy(&mut config.environment, names);
        Ok(Some(set))
    }

    /// Starts the services of an existing session again before its container starts.
    pub(super) async fn restart_services(&self) -> Result<()> {
        let Some(stored) = &self.record.compose else {
            return Ok(());
        };
        let lifetime = Lifetime::parse(&self.record.lifetime).unwrap_or_default();
        start_service_set(self.runtime, &self.set_spec(stored, lifetime)).await?;
        Ok(())
    }
}
