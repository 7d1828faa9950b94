//! The settings a session's containers are made with: resolved once, when the session is
//! created (`settings_resolution`), stored with the session record, and used for every
//! container the session ever gets. What the agent later writes into its clone — its
//! devcontainer.json included — never changes them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::host_paths::verify_in_clone;
use super::session_behaviour::Behaviour;
use super::uid_image::UidImage;
use crate::container_runtime::ContainerConfig;
use crate::devcontainer::{
    BuildConfig, DevcontainerConfig, FeatureRequest, HostRequirements, LifecycleCommand,
    PortRequest,
};
use crate::egress::EgressSpec;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::{ContainerMount, ContainerPrivileges, ResourceLimits};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ImageChoice {
    Named {
        name: String,
    },
    /// Built from the project's Dockerfile; rebuilt when the tag is gone.
    Built {
        tag: String,
        build: BuildConfig,
    },
}

impl ImageChoice {
    pub fn name(&self) -> &str {
        match self {
            ImageChoice::Named { name } => name,
            ImageChoice::Built { tag, .. } => tag,
        }
    }
}

/// Where a mount's source comes from, and so how it is checked before each start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "origin", rename_all = "camelCase")]
pub enum MountOrigin {
    /// This far below the session clone's root: walked without following symlinks.
    Clone { relative: PathBuf },
    /// A host path the host trusted, canonical when allowed: must still be.
    Host,
    /// A volume or tmpfs, which the engine makes.
    Engine,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMount {
    pub mount: ContainerMount,
    pub origin: MountOrigin,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    pub initialize: Option<LifecycleCommand>,
    pub on_create: Option<LifecycleCommand>,
    pub update_content: Option<LifecycleCommand>,
    pub post_create: Option<LifecycleCommand>,
    pub post_start: Option<LifecycleCommand>,
    pub post_attach: Option<LifecycleCommand>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSettings {
    /// The devcontainer.json the settings came from, if any.
    pub config_path: Option<String>,
    pub image: ImageChoice,
    /// Where the clone is mounted.
    pub mount_path: String,
    /// Where commands and tools run (`workspaceFolder`).
    pub workspace_folder: String,
    /// The container's own working directory (`runArgs --workdir`, else the folder).
    pub working_dir: String,
    /// The clone's mount first, then the others.
    pub mounts: Vec<SessionMount>,
    pub env: BTreeMap<String, String>,
    pub container_user: Option<String>,
    pub remote_user: Option<String>,
    /// A `None` value unsets the variable.
    pub remote_env: BTreeMap<String, Option<String>>,
    /// `runArgs --memory` (swap as the engine defaults it); `resources.memory` wins.
    pub memory: Option<i64>,
    pub cpu_shares: Option<i64>,
    /// The host's limits (its `Workspaces` default under the session's own, with the
    /// default pids limit); a record from before limits existed has none.
    #[serde(default, skip_serializing_if = "ResourceLimits::is_empty")]
    pub resources: ResourceLimits,
    /// devcontainer.json's `hostRequirements`, compared with `resources` at creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_requirements: Option<HostRequirements>,
    pub labels: BTreeMap<String, String>,
    pub network: Option<String>,
    pub hostname: Option<String>,
    /// `runArgs --platform`: the image's platform (built for it, created from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    pub privileges: ContainerPrivileges,
    pub lifecycle: Lifecycle,
    /// The image metadata's lifecycle commands, one per entry, each step run before the
    /// config's.
    #[serde(default)]
    pub image_lifecycle: Vec<Lifecycle>,
    #[serde(default)]
    pub behaviour: Behaviour,
    /// The image derived with the remote user's ids changed (`updateRemoteUserUID` on a
    /// host that is not root), which the container runs instead of `image`.
    #[serde(default)]
    pub uid_image: Option<UidImage>,
    /// The image derived with the features installed, when there are features.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_image: Option<String>,
    /// What the config holds that is not acted on.
    pub warnings: Vec<String>,
    /// devcontainer.json's features: local folders canonical, OCI references as written.
    #[serde(default)]
    pub features: Vec<FeatureRequest>,
    #[serde(default)]
    pub feature_install_order: Vec<String>,
    /// `trust.featureRegistries` at creation: where what features depend on may come from.
    #[serde(default)]
    pub feature_registries: Vec<String>,
    /// The session's egress as last set by the host (`None`: a record from before egress
    /// existed, which keeps the engine's network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<EgressSpec>,
    /// devcontainer.json's `forwardPorts` and `appPort`, served on the host by each process
    /// that attaches the session.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<PortRequest>,
}

impl Lifecycle {
    /// devcontainer.json's lifecycle commands.
    pub fn of(config: &DevcontainerConfig) -> Lifecycle {
        Lifecycle {
            initialize: config.initialize_command.clone(),
            on_create: config.on_create_command.clone(),
            update_content: config.update_content_command.clone(),
            post_create: config.post_create_command.clone(),
            post_start: config.post_start_command.clone(),
            post_attach: config.post_attach_command.clone(),
        }
    }

    /// The command of one step (`onCreateCommand`, …), if set.
    pub fn step(&self, name: &str) -> Option<&LifecycleCommand> {
        match name {
            "onCreateCommand" => self.on_create.as_ref(),
            "updateContentCommand" => self.update_content.as_ref(),
            "postCreateCommand" => self.post_create.as_ref(),
            "postStartCommand" => self.post_start.as_ref(),
            "postAttachCommand" => self.post_attach.as_ref(),
            _ => None,
        }
    }
}

impl SessionSettings {
    /// The image containers run: the derived one with the remote user's ids, else `image`.
    pub fn run_image(&self) -> &str {
        self.uid_image
            .as_ref()
            .map(|u| u.tag.as_str())
            .unwrap_or(self.featured_image())
    }

    /// The image with the session's features installed (the image itself without any).
    pub fn featured_image(&self) -> &str {
        self.feature_image.as_deref().unwrap_or(self.image.name())
    }

    /// Every command of a lifecycle step in order: the image metadata's, then the config's.
    pub fn commands_of(&self, step: &str) -> Vec<&LifecycleCommand> {
        self.image_lifecycle
            .iter()
            .chain(std::iter::once(&self.lifecycle))
            .filter_map(|l| l.step(step))
            .collect()
    }

    /// The derived image these settings need on a host whose effective user is not root
    /// (`updateRemoteUserUID`); `None` where the reference changes nothing.
    pub fn uid_image_wanted(&self) -> Option<UidImage> {
        // SAFETY: geteuid and getegid have no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let user = self.remote_user()?;
        (uid != 0 && user != "root" && self.behaviour.update_remote_user_uid())
            .then(|| UidImage::new(self.featured_image(), user, uid, gid))
    }

    /// The user that tools and lifecycle commands run as (`remoteUser`, else
    /// `containerUser`, else the image's).
    pub fn remote_user(&self) -> Option<&str> {
        self.remote_user
            .as_deref()
            .or(self.container_user.as_deref())
    }

    /// Checks every mount source against what it must still be, and makes missing
    /// directories in the clone. Runs before each create and start of the container.
    pub fn verify_mounts(&self, clone: &Path) -> Result<()> {
        for m in &self.mounts {
            let checked = match &m.origin {
                MountOrigin::Clone { relative } => verify_in_clone(clone, relative),
                MountOrigin::Host => match std::fs::canonicalize(&m.mount.source) {
                    Ok(now) if now == Path::new(&m.mount.source) => Ok(()),
                    Ok(now) => Err(std::io::Error::other(format!(
                        "it now resolves to {}",
                        now.display()
                    ))),
                    Err(e) => Err(e),
                },
                MountOrigin::Engine => Ok(()),
            };
            checked.map_err(|e| {
                Error::new(
                    ErrorCode::Devcontainer,
                    format!(
                        "mount {} -> {} refused: {e}",
                        m.mount.source, m.mount.target
                    ),
                )
            })?;
        }
        Ok(())
    }

    /// The engine-level config (name, labels and lifetime are the caller's).
    pub fn container_config(&self) -> ContainerConfig {
        ContainerConfig {
            image: Some(self.run_image().to_string()),
            working_directory: self.working_dir.clone(),
            mounts: self.mounts.iter().map(|m| m.mount.clone()).collect(),
            environment: self.env.clone(),
            memory: self.memory.filter(|_| self.resources.memory.is_none()),
            cpu_shares: self.cpu_shares,
            resources: self.resources,
            labels: self.labels.clone(),
            user: self.container_user.clone(),
            network: self.network.clone(),
            privileges: self.privileges.clone(),
            hostname: self.hostname.clone(),
            platform: self.platform.clone(),
            init: Some(self.behaviour.init()),
            image_command: !self.behaviour.override_command(),
            image_entrypoint: self.behaviour.service_entrypoint.clone(),
            image_arguments: self.behaviour.service_command.clone(),
            startup_commands: self.behaviour.entrypoints.clone(),
            ..Default::default()
        }
    }

    /// The memory limit the container gets: the host's, else `runArgs --memory`.
    pub fn effective_memory(&self) -> Option<i64> {
        self.resources.memory.or(self.memory)
    }

    /// A session without devcontainer.json: the clone at `/workspace` in `image`.
    pub fn plain(clone: &Path, image: String, mount_path: &str) -> SessionSettings {
        SessionSettings {
            config_path: None,
            image: ImageChoice::Named { name: image },
            mount_path: mount_path.to_string(),
            workspace_folder: mount_path.to_string(),
            working_dir: mount_path.to_string(),
            mounts: vec![clone_mount(clone, mount_path)],
            env: BTreeMap::new(),
            container_user: None,
            remote_user: None,
            remote_env: BTreeMap::new(),
            memory: None,
            cpu_shares: None,
            resources: ResourceLimits::default(),
            host_requirements: None,
            labels: BTreeMap::new(),
            network: None,
            hostname: None,
            platform: None,
            privileges: ContainerPrivileges::default(),
            lifecycle: Lifecycle::default(),
            image_lifecycle: Vec::new(),
            behaviour: Behaviour::default(),
            uid_image: None,
            feature_image: None,
            warnings: Vec::new(),
            features: Vec::new(),
            feature_install_order: Vec::new(),
            feature_registries: Vec::new(),
            egress: None,
            ports: Vec::new(),
        }
    }
}

/// The session clone itself, read-write, at `target`.
impl SessionSettings {
    /// The same settings for a session whose clone is `clone` (a fork's): every mount of
    /// the clone, or of a folder in it, now of the new one.
    pub fn with_clone(&self, clone: &Path) -> SessionSettings {
        let mut settings = self.clone();
        for m in &mut settings.mounts {
            if let MountOrigin::Clone { relative } = &m.origin {
                m.mount.source = clone.join(relative).to_string_lossy().into_owned();
            }
        }
        settings
    }
}

pub fn clone_mount(clone: &Path, target: &str) -> SessionMount {
    SessionMount {
        mount: ContainerMount::bind(&clone.to_string_lossy(), target, false),
        origin: MountOrigin::Clone {
            relative: PathBuf::new(),
        },
    }
}
