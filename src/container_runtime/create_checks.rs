//! What `create` verifies against the engine, so that a bad config fails at create with
//! what is missing rather than at the first start: the network exists, and a named user
//! (and group) exists in the image.

use crate::agent::resolve_user;
use crate::container_archive::EngineFiles;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::fileio::AccountFiles;

/// Network modes the engine knows without a network object.
fn built_in(network: &str) -> bool {
    matches!(
        network,
        "none" | "bridge" | "host" | "default" | "private" | "slirp4netns" | "pasta"
    ) || network.starts_with("container:")
        || network.starts_with("ns:")
}

pub async fn check_network(engine: &Engine, network: Option<&str>) -> Result<()> {
    let Some(network) = network.filter(|n| !n.is_empty() && !built_in(n)) else {
        return Ok(());
    };
    let subject = format!("network '{network}'");
    let inspect = engine.docker().inspect_network(
        network,
        None::<bollard::query_parameters::InspectNetworkOptions>,
    );
    match engine.call(&subject, inspect).await {
        Ok(_) => Ok(()),
        Err(err) if err.code == ErrorCode::Enoent => Err(Error::invalid_argument(format!(
            "network '{network}' does not exist in the engine {}: create it first, or use 'bridge' or 'none'",
            engine.endpoint()
        ))),
        Err(err) => Err(err),
    }
}

/// `user` as `uid[:gid]` needs nothing from the image; a name must be in the image's
/// /etc/passwd (a group name in its /etc/group), read from the created container.
pub async fn check_user(engine: &Engine, container: &str, user: Option<&str>) -> Result<()> {
    let Some(user) = user.filter(|u| !u.is_empty()) else {
        return Ok(());
    };
    let numeric = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    if user.split(':').all(numeric) && user.split(':').count() <= 2 {
        return Ok(());
    }
    let accounts = AccountFiles {
        container,
        host: None,
        agent: None,
        engine: Some(EngineFiles { engine, container }),
    };
    match resolve_user(&accounts, user).await {
        Ok(_) => Ok(()),
        // Podman resolves the container's user before it answers an archive request.
        Err(err) if err.message.to_ascii_lowercase().contains("unknown user") => {
            Err(Error::invalid_argument(format!(
                "user '{user}' is not in /etc/passwd of container '{container}' (the engine says: {})",
                err.message
            )))
        }
        Err(err) => Err(err),
    }
}
