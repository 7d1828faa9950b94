//! What a caller asks for when creating a container.

use std::collections::BTreeMap;
use std::path::Path;

use super::healthcheck::Healthcheck;
use crate::error::{Error, Result};
use crate::runtime::check_environment;
use crate::runtime::container_name;
use crate::runtime::resource_limits::ResourceLimits;
use crate::runtime::ContainerPrivileges;
use crate::runtime::Lifetime;
use crate::runtime::{check_ports, PortMapping};
use crate::runtime::{ContainerMount, MountKind};

/// What the engine does when the container's main process exits or the engine restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestartPolicy {
    No,
    UnlessStopped,
    Always,
    OnFailure,
}

impl RestartPolicy {
    pub fn parse(text: &str) -> Option<RestartPolicy> {
        match text {
            "no" => Some(RestartPolicy::No),
            "unless-stopped" => Some(RestartPolicy::UnlessStopped),
            "always" => Some(RestartPolicy::Always),
            "on-failure" => Some(RestartPolicy::OnFailure),
            _ => None,
        }
    }
}

/// A container of a session's service set (compose services sealed in one network
/// namespace): the set's holder container, and the service it runs (`None` on the holder).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetMembership {
    pub holder: String,
    pub service: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct ContainerConfig {
    pub id: Option<String>,
    pub name: Option<String>,
    pub image: Option<String>,
    pub working_directory: String,
    pub mounts: Vec<ContainerMount>,
    /// `Some`: a job whose main process is this command. `None`: a sandbox kept alive.
    pub command: Option<Vec<String>>,
    /// With no `command`: run the image's own entrypoint and command instead of the
    /// keep-alive (devcontainer `overrideCommand: false`).
    pub image_command: bool,
    /// With `image_command`: the arguments that replace the image's CMD, its ENTRYPOINT kept
    /// (compose `command` without `entrypoint`).
    pub image_arguments: Option<Vec<String>>,
    /// With `image_command`: the argv that replaces the image's ENTRYPOINT (empty: none),
    /// its CMD then `image_arguments` only (compose `entrypoint`).
    pub image_entrypoint: Option<Vec<String>>,
    /// With the keep-alive: shell commands it runs first, in order (devcontainer
    /// `entrypoint`s of features and image metadata).
    pub startup_commands: Vec<String>,
    /// The engine's init as the first process (`None`: yes).
    pub init: Option<bool>,
    pub environment: BTreeMap<String, String>,
    /// Bytes (swap as the engine defaults it); `resources.memory` is the same limit
    /// without swap, and both given must agree.
    pub memory: Option<i64>,
    pub cpu_shares: Option<i64>,
    /// Pids, memory (no swap on top), CPUs and open files.
    pub resources: ResourceLimits,
    pub labels: BTreeMap<String, String>,
    pub user: Option<String>,
    pub network: Option<String>,
    pub lifetime: Lifetime,
    /// What reaches beyond the container, as whoever decides allowed it.
    pub privileges: ContainerPrivileges,
    pub hostname: Option<String>,
    /// `name:address` lines for the container's hosts file (the engine refuses them on a
    /// container that joins another's network).
    pub extra_hosts: Vec<String>,
    /// Run by the engine where it runs healthchecks itself (dockerd).
    pub healthcheck: Option<Healthcheck>,
    /// Part of a session's service set (the `service-set` and `service` labels).
    pub service_set: Option<SetMembership>,
    /// `os/arch[/variant]` of the image to create from (the engine's own when unset).
    pub platform: Option<String>,
    /// Published on the host (loopback unless a mapping names another address).
    pub ports: Vec<PortMapping>,
    pub restart_policy: Option<RestartPolicy>,
    /// Namespaced kernel parameters (`net.*`, `kernel.shm*`...); the engine refuses others.
    pub sysctls: BTreeMap<String, String>,
    /// Recorded in the session label; defaults to `id`, else the container name.
    pub session_id: Option<String>,
    pub clone_path: Option<String>,
    pub project_dir: Option<String>,
    /// Where the container may connect: through the session relay unless `bridge`; `None`
    /// keeps the engine's network (the host's decision).
    pub egress: Option<crate::egress::Egress>,
    /// When the image is pulled (`None`: the runtime's policy).
    pub pull: Option<crate::engine::PullPolicy>,
    /// Where a pull's progress goes.
    pub progress: crate::progress::Progress,
    /// Made as a warm pool member: the key of its settings (the `pool` label).
    pub pool: Option<String>,
}

impl ContainerConfig {
    /// Rejects relative paths, an empty command, bad limits and bad variable names.
    pub fn validate(&self) -> Result<()> {
        let absolute = |p: &str| p.starts_with('/');
        if !absolute(&self.working_directory) {
            return Err(Error::invalid_argument(format!(
                "workingDirectory '{}' must be an absolute container path",
                self.working_directory
            )));
        }
        for mount in &self.mounts {
            let bind = mount.kind == MountKind::Bind;
            if (bind && !Path::new(&mount.source).is_absolute()) || !absolute(&mount.target) {
                return Err(Error::invalid_argument(format!(
                    "mount '{}' -> '{}': source and target must be absolute paths",
                    mount.source, mount.target
                )));
            }
        }
        if let Some(command) = &self.command {
            if command.first().is_none_or(|c| c.is_empty()) {
                return Err(Error::invalid_argument("command must not be empty"));
            }
        }
        if self.memory.is_some_and(|m| m <= 0) || self.cpu_shares.is_some_and(|c| c < 0) {
            return Err(Error::invalid_argument(
                "memory must be a positive number of bytes and cpuShares non-negative",
            ));
        }
        self.resources.validate("resources")?;
        if let (Some(old), Some(new)) = (self.memory, self.resources.memory) {
            if old != new {
                return Err(Error::invalid_argument(format!(
                    "memory {old} and resources.memory {new} disagree: give one of them"
                )));
            }
        }
        check_environment(&self.environment, "container config")?;
        if let Some(check) = &self.healthcheck {
            check.validate("container config")?;
        }
        check_ports(&self.ports)?;
        self.check_restart_and_sysctls()
    }

    fn check_restart_and_sysctls(&self) -> Result<()> {
        let restarts = self.restart_policy.is_some_and(|p| p != RestartPolicy::No);
        if restarts && self.lifetime == Lifetime::Process {
            return Err(Error::invalid_argument(
                "restartPolicy: a 'process'-lifetime container is removed with its process; restarting it needs lifetime 'session'",
            ));
        }
        for (key, value) in &self.sysctls {
            let name_ok = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
            if !name_ok || value.contains('\0') {
                return Err(Error::invalid_argument(format!(
                    "sysctls: '{}' is not a kernel parameter name",
                    key.escape_debug()
                )));
            }
        }
        Ok(())
    }

    /// Validates, then resolves the container's name and image (this config's, else
    /// `default_image`).
    pub fn name_and_image(&self, default_image: Option<&str>) -> Result<(String, String)> {
        self.validate()?;
        let name = container_name(self.name.as_deref(), self.id.as_deref())?;
        let image = self
            .image
            .clone()
            .or_else(|| default_image.map(str::to_string))
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "container '{name}': no image given (set config.image or the runtime's image)"
                ))
            })?;
        Ok((name, image))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn relative_paths_and_empty_commands_are_invalid() {
        let mut config = ContainerConfig {
            working_directory: "work".into(),
            ..Default::default()
        };
        assert_eq!(
            config.validate().unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        config.working_directory = "/work".into();
        config.command = Some(vec![]);
        assert_eq!(
            config.validate().unwrap_err().code,
            ErrorCode::InvalidArgument
        );
        config.command = None;
        config.mounts.push(ContainerMount::bind("rel", "/w", false));
        assert_eq!(
            config.validate().unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn memory_and_resources_memory_must_agree() {
        let mut config = ContainerConfig {
            working_directory: "/work".into(),
            memory: Some(64 << 20),
            ..Default::default()
        };
        config.resources.memory = Some(64 << 20);
        assert!(config.validate().is_ok());
        config.resources.memory = Some(32 << 20);
        let err = config.validate().unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
        assert!(err.message.contains("disagree"), "{}", err.message);
        config.memory = None;
        config.resources.pids = Some(0);
        assert_eq!(
            config.validate().unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    }
}
