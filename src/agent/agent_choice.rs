//! Which agent a container gets: the one for the architecture the container runs as, which
//! need not be the host's or even the engine's (Docker Desktop on a Mac runs linux/arm64
//! containers; a `linux/amd64` image runs emulated on an arm64 engine). That is the platform
//! the container was created for, else its image's `Architecture`, else the engine's.

use std::sync::Arc;

use bollard::models::ContainerInspectResponse;

use super::agent_binary::{agent_binary, disabled, AgentBinary, SWITCHED_OFF};
use crate::engine::{find_image, Engine};
use crate::error::Result;

/// The agent for a running container, or why there is none (the engine's failure to tell
/// its architecture among the reasons).
pub async fn agent_for_container(
    engine: &Engine,
    inspected: &ContainerInspectResponse,
) -> std::result::Result<Arc<AgentBinary>, String> {
    if disabled() {
        return Err(SWITCHED_OFF.into());
    }
    let arch = container_arch(engine, inspected)
        .await
        .map_err(|e| e.message)?;
    agent_binary(&arch)
}

/// The agent for a container about to be created from `image` (for `platform`, if given), or
/// why there is none; an engine that cannot say what the image is, is an error.
pub async fn agent_for_new_container(
    engine: &Engine,
    image: &str,
    platform: Option<&str>,
) -> Result<std::result::Result<Arc<AgentBinary>, String>> {
    if disabled() {
        return Ok(Err(SWITCHED_OFF.into()));
    }
    let arch = match platform.and_then(platform_arch) {
        Some(arch) => arch,
        None => image_arch(engine, image)
            .await?
            .unwrap_or_else(|| engine.info().arch.clone()),
    };
    Ok(agent_binary(&arch))
}

/// The architecture `inspected` runs as: its image manifest's platform (engines with a
/// multi-platform image store), else its image's, else the engine's.
async fn container_arch(engine: &Engine, inspected: &ContainerInspectResponse) -> Result<String> {
    let manifest = inspected
        .image_manifest_descriptor
        .as_ref()
        .and_then(|d| d.platform.as_ref())
        .and_then(|p| p.architecture.clone())
        .filter(|a| !a.is_empty());
    if let Some(arch) = manifest {
        return Ok(arch);
    }
    if let Some(image) = inspected.image.as_deref().filter(|i| !i.is_empty()) {
        if let Some(arch) = image_arch(engine, image).await? {
            return Ok(arch);
        }
    }
    Ok(engine.info().arch.clone())
}

/// The `Architecture` of `image` (a name or an id); `None` when the engine has no such
/// image or does not say.
pub async fn image_arch(engine: &Engine, image: &str) -> Result<Option<String>> {
    let inspected = find_image(engine, image).await?;
    Ok(inspected
        .and_then(|i| i.architecture)
        .filter(|a| !a.is_empty()))
}

/// The architecture in a platform string: `os/arch[/variant]`, or an architecture alone.
pub fn platform_arch(platform: &str) -> Option<String> {
    let mut parts = platform.split('/').filter(|p| !p.is_empty());
    let first = parts.next()?;
    match parts.next() {
        Some(arch) => Some(arch.to_string()),
        None if super::agent_lookup::AgentArch::from_name(first).is_some() => {
            Some(first.to_string())
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::platform_arch;

    #[test]
    fn a_platform_names_its_architecture_second_or_alone() {
        assert_eq!(platform_arch("linux/arm64/v8").as_deref(), Some("arm64"));
        assert_eq!(platform_arch("linux/amd64").as_deref(), Some("amd64"));
        assert_eq!(platform_arch("arm64").as_deref(), Some("arm64"));
        assert_eq!(platform_arch("linux"), None);
        assert_eq!(platform_arch(""), None);
    }
}
