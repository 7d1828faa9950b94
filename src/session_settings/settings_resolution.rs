//! A session's settings from the project's devcontainer.json, the host's options and the
//! host's trust. Everything in the config that would reach the host is checked here; what
//! the host has not allowed is refused all at once, each item naming its field and the
//! trust option that allows it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::host_paths::{is_trusted, place, reaches_socket, verify_in_clone, HostPlace};
use super::local_feature_dir::checked_local_dir;
use super::session_behaviour::Behaviour;
use super::stored_settings::{
    clone_mount, ImageChoice, Lifecycle, MountOrigin, SessionMount, SessionSettings,
};
use super::trust::{refused, registry_allowed, Grant, Refusal, Trust};
use crate::devcontainer::{
    devcontainer_id, BuildConfig, DevcontainerConfig, FeatureRequest, FeatureSource, MountKind,
    MountSpec,
};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::ContainerPrivileges;

/// What the host gives besides the config.
pub struct SettingsRequest<'a> {
    pub project: &'a Path,
    pub clone: &'a Path,
    pub image: Option<&'a str>,
    pub default_image: Option<&'a str>,
    pub env: &'a BTreeMap<String, String>,
    pub network: Option<&'a str>,
    pub trust: &'a Trust,
    /// Sockets whose mount would hand the container the engine.
    pub engine_sockets: &'a [PathBuf],
    pub session_id: &'a str,
    pub mount_path: &'a str,
}

pub(super) struct Resolver<'a> {
    pub(super) request: &'a SettingsRequest<'a>,
    pub(super) config_path: String,
    pub(super) refusals: Vec<Refusal>,
}

fn invalid(config_path: &str, why: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::Devcontainer, format!("{config_path}: {why}"))
}

impl Resolver<'_> {
    /// A bind mount's source checked against the clone and the trust; `None` when refused.
    fn bind(&mut self, field: &str, mount: &MountSpec) -> Result<Option<SessionMount>> {
        let request = self.request;
        let source = Path::new(&mount.source);
        if let Some(p) = mount
            .propagation
            .as_deref()
            .filter(|p| !p.ends_with("private"))
        {
            if !request.trust.host_namespaces {
                self.refusals.push(Refusal::new(
                    field,
                    format!("mount propagation '{p}' shares mounts with the host"),
                    Grant::Flag("hostNamespaces"),
                ));
            }
        }
        let placed = place(request.clone, source).map_err(|e| {
            invalid(
                &self.config_path,
                format_args!(
                    "{field}: bind mount source '{}' cannot be used ({e}); sources outside the session clone must exist and are never created",
                    mount.source
                ),
            )
        })?;
        match placed {
            HostPlace::InClone(relative) => {
                verify_in_clone(request.clone, &relative)
                    .map_err(|e| invalid(&self.config_path, format_args!("{field}: {e}")))?;
                let mut checked = mount.clone();
                checked.source = request.clone.join(&relative).to_string_lossy().into_owned();
                Ok(Some(SessionMount {
                    mount: checked,
                    origin: MountOrigin::Clone { relative },
                }))
            }
            HostPlace::Outside(canonical) => {
                let shown = canonical.to_string_lossy().into_owned();
                let mut allowed = true;
                if !is_trusted(&canonical, &request.trust.host_paths) {
                    self.refusals.push(Refusal::new(
                        field,
                        format!("bind mount of host path {shown} (outside the session clone)"),
                        Grant::List("hostPaths", vec![shown.clone()]),
                    ));
                    allowed = false;
                }
                if reaches_socket(&canonical, request.engine_sockets)
                    && !request.trust.engine_socket
                {
                    self.refusals.push(Refusal::new(
                        field,
                        format!("{shown} gives the container the engine's socket"),
                        Grant::Flag("engineSocket"),
                    ));
                    allowed = false;
                }
                let mut checked = mount.clone();
                checked.source = shown;
                Ok(allowed.then_some(SessionMount {
                    mount: checked,
                    origin: MountOrigin::Host,
                }))
            }
        }
    }

    pub(super) fn mount(&mut self, field: &str, mount: &MountSpec) -> Result<Option<SessionMount>> {
        match mount.kind {
            MountKind::Bind => self.bind(field, mount),
            MountKind::Volume | MountKind::Tmpfs => Ok(Some(SessionMount {
                mount: mount.clone(),
                origin: MountOrigin::Engine,
            })),
        }
    }

    /// A build's Dockerfile or context: inside the project, or under a trusted path.
    fn build_path(&mut self, field: &str, path: &Path, dir: bool) -> Result<PathBuf> {
        let canonical = std::fs::canonicalize(path)
            .ok()
            .filter(|p| if dir { p.is_dir() } else { p.is_file() })
            .ok_or_else(|| {
                invalid(
                    &self.config_path,
                    format_args!("{field} {} does not exist", path.display()),
                )
            })?;
        let project = std::fs::canonicalize(self.request.project)
            .unwrap_or_else(|_| self.request.project.to_path_buf());
        if !canonical.starts_with(&project)
            && !is_trusted(&canonical, &self.request.trust.host_paths)
        {
            let shown = canonical.to_string_lossy().into_owned();
            self.refusals.push(Refusal::new(
                field,
                format!("{shown} is outside the project"),
                Grant::List("hostPaths", vec![shown.clone()]),
            ));
        }
        Ok(canonical)
    }

    fn image(&mut self, config: &DevcontainerConfig) -> Result<ImageChoice> {
        let request = self.request;
        if let Some(name) = request.image.or(config.image.as_deref()) {
            return Ok(ImageChoice::Named {
                name: name.to_string(),
            });
        }
        if let Some(build) = &config.build {
            let checked = BuildConfig {
                dockerfile: self.build_path("build.dockerfile", &build.dockerfile, false)?,
                context: self.build_path("build.context", &build.context, true)?,
                ..build.clone()
            };
            let tag = format!(
                "container-isolation-devcontainer-{}:latest",
                &devcontainer_id(request.project)[..16]
            );
            return Ok(ImageChoice::Built {
                tag,
                build: checked,
            });
        }
        default_image(request)
    }

    /// The config's features: local folders checked to be in the project (canonical), OCI
    /// ones from a registry the host trusts.
    fn features(&mut self, config: &DevcontainerConfig) -> Result<Vec<FeatureRequest>> {
        let mut features = config.features.clone();
        for feature in &mut features {
            match &mut feature.source {
                FeatureSource::Local { path } => {
                    *path = checked_local_dir(self.request.project, path, &feature.reference)?;
                }
                FeatureSource::Unsupported { why } => {
                    return Err(invalid(&self.config_path, format_args!("features: {why}")));
                }
                FeatureSource::Oci(oci) => {
                    if !registry_allowed(&self.request.trust.feature_registries, &oci.registry) {
                        self.refusals.push(Refusal::new(
                            &format!("features.{}", feature.reference),
                            format!("the host would fetch it from the registry {}", oci.registry),
                            Grant::List("featureRegistries", vec![oci.registry.clone()]),
                        ));
                    }
                }
            }
        }
        Ok(features)
    }

    fn privileges(&mut self, config: &DevcontainerConfig, network: Option<&str>) {
        let trust = self.request.trust;
        let top = [
            (
                "privileged",
                ContainerPrivileges {
                    privileged: config.privileged,
                    ..Default::default()
                },
            ),
            (
                "capAdd",
                ContainerPrivileges {
                    cap_add: config.cap_add.clone(),
                    ..Default::default()
                },
            ),
            (
                "securityOpt",
                ContainerPrivileges {
                    security_opt: config.security_opt.clone(),
                    ..Default::default()
                },
            ),
        ];
        for (field, asked) in &top {
            self.refusals
                .extend(trust.check_privileges(field, asked, None));
        }
        let run = &config.run_args.privileges;
        self.refusals
            .extend(trust.check_privileges("runArgs", run, network));
    }
}

fn default_image(request: &SettingsRequest<'_>) -> Result<ImageChoice> {
    let name = request.image.or(request.default_image).ok_or_else(|| {
        Error::invalid_argument(format!(
            "session '{}': no image (give one to create(), the Workspaces constructor, or devcontainer.json)",
            request.session_id
        ))
    })?;
    Ok(ImageChoice::Named {
        name: name.to_string(),
    })
}

/// Settings without devcontainer.json: the clone at the mount path in the host's image.
pub fn plain_settings(request: &SettingsRequest<'_>) -> Result<SessionSettings> {
    let mut settings = SessionSettings::plain(
        request.clone,
        default_image(request)?.name().to_string(),
        request.mount_path,
    );
    settings.env = request.env.clone();
    settings.network = request.network.map(str::to_string);
    Ok(settings)
}

pub fn resolve_settings(
    request: &SettingsRequest<'_>,
    config: &DevcontainerConfig,
) -> Result<SessionSettings> {
    let mut r = Resolver {
        request,
        config_path: config.config_path.to_string_lossy().into_owned(),
        refusals: Vec::new(),
    };
    if config.compose.is_some() {
        return Err(invalid(
            &r.config_path,
            "dockerComposeFile: Docker Compose configs are not run (a session is one container from image or build); create the session with devcontainer: false to use the host's image instead",
        ));
    }
    let (mount_path, mounts) = r.session_mounts(config)?;
    // The host's own network choice is trusted; the config's is checked.
    let network = request
        .network
        .map(str::to_string)
        .or_else(|| config.run_args.network.clone());
    r.host_asks(
        config,
        network.as_deref().filter(|_| request.network.is_none()),
    );
    let image = r.image(config)?;
    let features = r.features(config)?;
    if !r.refusals.is_empty() {
        return Err(refused(&r.config_path, &r.refusals));
    }
    let mut env = config.container_env.clone();
    env.extend(config.run_args.env.clone());
    env.extend(request.env.clone());
    let mut labels = config.run_args.labels.clone();
    labels.retain(|k, _| !k.starts_with(crate::runtime::labels::PREFIX));
    let run_args = &config.run_args;
    Ok(SessionSettings {
        config_path: Some(r.config_path),
        image,
        mount_path,
        workspace_folder: config.workspace_folder.clone(),
        working_dir: (run_args.workdir.clone()).unwrap_or_else(|| config.workspace_folder.clone()),
        mounts,
        env,
        container_user: config.container_user.clone().or(run_args.user.clone()),
        remote_user: config.remote_user.clone(),
        remote_env: config.remote_env.clone(),
        memory: run_args.memory,
        cpu_shares: run_args.cpu_shares,
        resources: Default::default(),
        host_requirements: config.host_requirements.clone(),
        labels,
        network,
        hostname: run_args.hostname.clone(),
        platform: run_args.platform.clone(),
        privileges: ContainerPrivileges {
            privileged: config.privileged,
            cap_add: config.cap_add.clone(),
            security_opt: config.security_opt.clone(),
            ..Default::default()
        }
        .merged(run_args.privileges.clone()),
        behaviour: Behaviour::of(config),
        image_lifecycle: Vec::new(),
        uid_image: None,
        feature_image: None,
        lifecycle: Lifecycle::of(config),
        warnings: config.warnings.clone(),
        features,
        feature_install_order: config.override_feature_install_order.clone(),
        feature_registries: request.trust.feature_registries.clone(),
        egress: None,
        ports: config.ports.clone(),
    })
}

impl Resolver<'_> {
    /// Where the clone is mounted, and every mount: the clone's (or `workspaceMount`)
    /// first, then `mounts`, then `runArgs`' — each bind mount checked.
    fn session_mounts(
        &mut self,
        config: &DevcontainerConfig,
    ) -> Result<(String, Vec<SessionMount>)> {
        let mount_path = config
            .workspace_mount
            .as_ref()
            .map(|m| m.target.clone())
            .unwrap_or_else(|| config.workspace_folder.clone());
        let workspace = match &config.workspace_mount {
            None => Some(clone_mount(self.request.clone, &mount_path)),
            Some(m) if m.kind == MountKind::Bind => self.bind("workspaceMount", m)?,
            Some(_) => {
                return Err(invalid(
                    &self.config_path,
                    "workspaceMount must be a bind mount (of the session clone)",
                ))
            }
        };
        let mut mounts: Vec<SessionMount> = workspace.into_iter().collect();
        let extra = config
            .mounts
            .iter()
            .enumerate()
            .map(|(i, m)| (format!("mounts[{i}]"), m));
        let from_run_args = config
            .run_args
            .mounts
            .iter()
            .map(|m| ("runArgs".to_string(), m));
        for (field, m) in extra.chain(from_run_args) {
            mounts.extend(self.mount(&field, m)?);
        }
        Ok((mount_path, mounts))
    }

    /// Refusals for what the config asks of the host: privileges, the config's own
    /// `network`, `initializeCommand` and host environment variables.
    fn host_asks(&mut self, config: &DevcontainerConfig, network: Option<&str>) {
        self.privileges(config, network);
        let trust = self.request.trust;
        if config.initialize_command.is_some() && !trust.host_commands {
            self.refusals.push(Refusal::new(
                "initializeCommand",
                "runs a command on the host",
                Grant::Flag("hostCommands"),
            ));
        }
        self.refusals
            .extend(trust.check_local_env(&config.denied_env));
    }
}

#[cfg(test)]
#[path = "settings_resolution_tests.rs"]
mod tests;
