//! Credentials for an image registry, from the host's docker config only
//! (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`), found as docker finds them:
//! the registry's `credHelpers` entry, else `credsStore`, run as `docker-credential-<name>
//! get`; else its `auths` entry. They are held in memory for one request, never written,
//! logged or put in an error message.

mod cred_helper;
mod credentials;
mod docker_config;
mod server_name;

pub use cred_helper::{run_helper, HELPER_OUTPUT_LIMIT, HELPER_TIMEOUT};
pub use credentials::RegistryCredentials;
pub use docker_config::{config_path, DockerConfig};
pub use server_name::{api_host, canonical_host, is_docker_hub, server_url};

use crate::error::Result;

/// The credentials the host's docker config gives for the registry at `host` (a
/// `host[:port]`; Docker Hub under any of its names), or `None` for an anonymous request.
/// A helper that fails, hangs past `HELPER_TIMEOUT` or answers garbage rejects
/// (`REGISTRY_AUTH`, `TIMEOUT`); one that has nothing for the registry falls through to
/// `auths`.
pub async fn credentials_for(host: &str) -> Result<Option<RegistryCredentials>> {
    let Some(config) = DockerConfig::load().await else {
        return Ok(None);
    };
    if let Some((helper, origin)) = config.helper_for(host) {
        let program = format!("docker-credential-{helper}");
        let found = run_helper(program.as_ref(), &server_url(host), HELPER_TIMEOUT)
            .await
            .map_err(|failure| failure.into_error(&program, origin, host))?;
        if let Some(answer) = found {
            return Ok(Some(RegistryCredentials::from_helper(
                answer,
                host,
                &format!("credential helper {program} ({origin} of the docker config)"),
            )));
        }
    }
    config.stored_for(host)
}
