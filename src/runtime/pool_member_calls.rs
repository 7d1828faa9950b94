//! What a warm pool does with a container beyond `ContainerRuntime`: start a member without
//! its relay, and rename it to the session that claims it.

use bollard::query_parameters::RenameContainerOptionsBuilder;

use super::docker_runtime::{container_subject, DockerRuntime};
use crate::error::Result;

impl DockerRuntime {
    /// Starts `id` without a relay: a warm pool member's relay starts when a session claims
    /// it, under the session's name and policy.
    pub async fn start_unrelayed(&self, id: &str) -> Result<()> {
        let engine = self.engine().await?;
        self.relayed.forget(&engine, id);
        engine
            .call(
                &container_subject(id),
                engine.docker().start_container(id, None),
            )
            .await
    }

    /// Renames `id` to `name`. The engine gives a name to one container only: of two renames
    /// to one name, the second fails.
    pub async fn rename(&self, id: &str, name: &str) -> Result<()> {
        let engine = self.engine().await?;
        let options = RenameContainerOptionsBuilder::default().name(name).build();
        engine
            .call(
                &container_subject(id),
                engine.docker().rename_container(id, options),
            )
            .await
    }
}
