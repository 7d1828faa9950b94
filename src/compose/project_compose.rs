//! A project's compose devcontainer read as `Workspaces.create` would read it
//! (`readComposeProject`): its devcontainer.json with the host's environment as the trust
//! grants it, then its compose files, against the sockets of every engine this host could
//! reach.

use std::path::Path;

use super::compose_plan::ComposePlan;
use super::compose_reading::{read_compose_project, ComposeRequest};
use crate::devcontainer::{read_devcontainer_config_with, HostEnv, ReadOptions};
use crate::error::Result;
use crate::session_settings::{local_engine_sockets, Trust};

/// `None` when the project has no devcontainer.json or it names no compose file.
pub fn read_project_compose(project: &Path, trust: &Trust) -> Result<Option<ComposePlan>> {
    let host_env = || HostEnv::only(std::env::vars().collect(), &trust.local_env);
    let config = read_devcontainer_config_with(
        project,
        ReadOptions {
            local_folder: None,
            host_env: host_env(),
        },
    )?;
    let Some(config) = config else {
        return Ok(None);
    };
    let Some(compose) = &config.compose else {
        return Ok(None);
    };
    let config_dir = config.config_path.parent().unwrap_or(project);
    let sockets = local_engine_sockets();
    read_compose_project(&ComposeRequest {
        compose,
        config_dir,
        project: &std::path::absolute(project).unwrap_or_else(|_| project.to_path_buf()),
        host_env: &host_env(),
        trust,
        engine_sockets: &sockets,
    })
    .map(Some)
}
