//! Where a connection learns the user its container runs as (the user of a command that
//! names none): asked of the engine, or told by whoever started the agent (a Pod's spec).

use crate::engine::Engine;
use crate::error::Result;

pub enum ConfiguredUser {
    /// The container's configured user, as the engine's inspect gives it.
    Engine(Engine),
    /// A user spec (`name`, `uid[:gid]`; empty for the image's, root).
    Known(String),
}

impl ConfiguredUser {
    pub async fn spec(&self, container: &str) -> Result<String> {
        match self {
            ConfiguredUser::Known(spec) => Ok(spec.clone()),
            ConfiguredUser::Engine(engine) => Ok(engine
                .inspect_container(container, &format!("container '{container}'"))
                .await?
                .config
                .and_then(|c| c.user)
                .unwrap_or_default()),
        }
    }
}
