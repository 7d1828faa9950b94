//! What a warm pool does with a container beyond `ContainerRuntime`: start a member with its
//! relay holding every connection, and rename it to the session that claims it.

use bollard::query_parameters::RenameContainerOptionsBuilder;

use super::docker_runtime::{container_subject, DockerRuntime};
use crate::egress::{ensure_relay, Egress};
use crate::error::Result;

impl DockerRuntime {
    /// Starts warm pool member `id`. A relayed one's relay starts now under `held` (no
    /// destination), filed under the member's name: the session that claims it takes it
    /// over (`egress::move_relay`) and gives it its own policy. This runtime does not keep
    /// it for later starts; the claiming session's runtime does.
    pub async fn start_member(&self, id: &str, held: Option<&Egress>) -> Result<()> {
        let engine = self.engine().await?;
        self.relayed.forget(&engine, id);
        engine
            .call(
                &container_subject(id),
                engine.docker().start_container(id, None),
            )
            .await?;
        if let Some(held) = held {
            ensure_relay(&engine, id, id, held).await?;
        }
        Ok(())
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
