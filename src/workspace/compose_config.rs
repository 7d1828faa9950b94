//! A Compose devcontainer made into what a session is resolved from: the compose files
//! read from the project under the host's trust (`crate::compose`), the session's own
//! service (`service`) turned into the image config every other session is resolved from
//! (its image or build, environment, user, working folder, labels, privileges, and its
//! bind of the project as the session clone's mount), and the other services kept as the
//! set the session starts before its container (`crate::compose_services`), each with what
//! the trust granted it and its binds of the project as the session clone's. What a
//! session does not run is refused by name, as the rest of devcontainer.json is.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::compose::{self, ComposeRequest, MountSource, PlannedService, ServiceBuild};
use crate::compose_services::{
    BindMount, BindSource, Dependency, ServiceSpec, StoredServices, VolumeMount,
};
use crate::container_runtime::Healthcheck;
use crate::devcontainer::{BuildConfig, DevcontainerConfig, HostEnv, MountKind, MountSpec};
use crate::egress::{HTTP_PROXY_PORT, SOCKS_PORT};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::ContainerPrivileges;
use crate::session_settings::{verify_in_clone, Trust};

/// What reading a compose devcontainer gives a session.
pub struct ComposeSession {
    /// devcontainer.json with the session's service in place of `dockerComposeFile`.
    pub config: DevcontainerConfig,
    pub services: StoredServices,
}

/// Reads the compose files `config` names from `project` (never the clone) and maps them.
pub fn read_compose_session(
    config: &DevcontainerConfig,
    project: &Path,
    clone: &Path,
    trust: &Trust,
    engine_sockets: &[PathBuf],
) -> Result<ComposeSession> {
    let compose = config
        .compose
        .as_ref()
        .ok_or_else(|| invalid(config, "no dockerComposeFile".into()))?;
    let host_env = HostEnv::only(std::env::vars().collect(), &trust.local_env);
    let config_dir = config.config_path.parent().unwrap_or(project);
    let plan = compose::read_compose_project(&ComposeRequest {
        compose,
        config_dir,
        project,
        host_env: &host_env,
        trust,
        engine_sockets,
    })?;
    let app = plan.service(&plan.service).ok_or_else(|| {
        let why = format!(
            "service '{}' is not among the compose services",
            plan.service
        );
        invalid(config, why)
    })?;
    relay_ports_free(config, &plan.services)?;
    let mut session = app_config(config, app, clone)?;
    session.warnings.extend(plan.warnings.iter().cloned());
    let services = plan
        .services
        .iter()
        .filter(|s| s.name != plan.service)
        .map(|s| service_spec(config, s, clone, &plan.services))
        .collect::<Result<Vec<_>>>()?;
    Ok(ComposeSession {
        config: session,
        services: StoredServices {
            app_service: plan.service.clone(),
            app_depends_on: dependencies(app),
            services,
        },
    })
}

/// No service may listen where the session's relay does: the loopback is shared.
fn relay_ports_free(config: &DevcontainerConfig, services: &[PlannedService]) -> Result<()> {
    for s in services {
        for port in &s.ports {
            if [HTTP_PROXY_PORT, SOCKS_PORT].contains(&port.container_port) {
                return Err(invalid(
                    config,
                    format!(
                        "services.{}: {} {}: the session's relay listens there (the services share its loopback)",
                        s.name, port.field, port.container_port
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// devcontainer.json as if it named the session's service's image (or build) itself.
fn app_config(
    config: &DevcontainerConfig,
    app: &PlannedService,
    clone: &Path,
) -> Result<DevcontainerConfig> {
    let mut c = config.clone();
    c.compose = None;
    match (&app.build, &app.image) {
        (Some(build), _) => {
            c.build = Some(build_config(build));
            c.image = None;
        }
        (None, Some(image)) => c.image = Some(image.clone()),
        (None, None) => {
            return Err(invalid(
                config,
                format!("service '{}' has neither image nor build", app.name),
            ))
        }
    }
    let mut env = app.environment.clone();
    env.extend(config.container_env.clone());
    c.container_env = env;
    c.container_user = config.container_user.clone().or(app.user.clone());
    c.run_args.workdir = c.run_args.workdir.clone().or(app.working_dir.clone());
    c.run_args.platform = c.run_args.platform.clone().or(app.platform.clone());
    c.run_args.labels.extend(app.labels.clone());
    c.init = config.init.or(app.init);
    c.privileged |= app.privileges.privileged;
    c.cap_add.extend(app.privileges.cap_add.iter().cloned());
    c.security_opt
        .extend(app.privileges.security_opt.iter().cloned());
    let rest = app_privileges(config, app)?;
    c.run_args.privileges = std::mem::take(&mut c.run_args.privileges).merged(rest);
    for mount in &app.mounts {
        app_mount(config, &mut c, mount, clone)?;
    }
    for target in &app.tmpfs {
        c.mounts.push(MountSpec::new(MountKind::Tmpfs, "", target));
    }
    // The reference CLI runs the service's own command: overrideCommand is false unless
    // devcontainer.json says true (then our keep-alive runs, as for an image config).
    c.override_command = Some(config.override_command.unwrap_or(false));
    if c.override_command == Some(true) && (app.command.is_some() || app.entrypoint.is_some()) {
        c.warnings.push(format!(
            "services.{}: command and entrypoint are not run (overrideCommand is true: the session's container runs its own keep-alive)",
            app.name
        ));
    }
    c.service_entrypoint = app.entrypoint.clone();
    c.service_command = app.command.clone();
    if !app.ports.is_empty() {
        c.warnings.push(format!(
            "services.{}: ports are served on the host only through forwardPort",
            app.name
        ));
    }
    Ok(c)
}

/// One of the session's service's mounts: the project (or a folder of it) becomes the
/// clone's; a host path the trust allowed stays; a named volume is refused.
fn app_mount(
    config: &DevcontainerConfig,
    c: &mut DevcontainerConfig,
    mount: &compose::ServiceMount,
    clone: &Path,
) -> Result<()> {
    match &mount.source {
        MountSource::Project(relative) if relative.as_os_str().is_empty() => {
            let source = clone.to_string_lossy();
            c.workspace_mount = Some(MountSpec::bind(&source, &mount.target, false));
        }
        MountSource::Project(relative) => {
            let source = clone.join(relative);
            let source = source.to_string_lossy();
            c.mounts
                .push(MountSpec::bind(&source, &mount.target, mount.read_only));
        }
        MountSource::Host(path) => c.mounts.push(MountSpec::bind(
            &path.to_string_lossy(),
            &mount.target,
            mount.read_only,
        )),
        MountSource::Volume(None) => c
            .mounts
            .push(MountSpec::new(MountKind::Volume, "", &mount.target)),
        MountSource::Volume(Some(name)) => {
            return Err(invalid(
                config,
                format!(
                    "the session's service mounts volume '{name}' at {}: named volumes are run on the other services, not on the session's own",
                    mount.target
                ),
            ))
        }
        MountSource::Tmpfs => c
            .mounts
            .push(MountSpec::new(MountKind::Tmpfs, "", &mount.target)),
    }
    Ok(())
}

/// The session's service's `cap_drop`, `devices` and namespaces, as its `runArgs` would
/// give them (checked against the trust with them); another container's namespace is
/// refused: the session's own service is started last and joins none of theirs.
fn app_privileges(
    config: &DevcontainerConfig,
    app: &PlannedService,
) -> Result<ContainerPrivileges> {
    let p = &app.privileges;
    if let Some((kind, mode)) = p
        .namespaces
        .iter()
        .find(|(_, m)| m.starts_with("container:"))
    {
        return Err(invalid(
            config,
            format!(
                "services.{}: {kind}: '{mode}' is refused: the session's own service joins no other container's namespace",
                app.name
            ),
        ));
    }
    Ok(ContainerPrivileges {
        cap_drop: p.cap_drop.clone(),
        devices: p.devices.clone(),
        namespaces: p.namespaces.clone(),
        ..Default::default()
    })
}

/// A service of the set: what `compose_services` makes its container from. Its privileges
/// are what the trust granted (the reading refused the rest); a bind of the project is of
/// the session clone's path, checked there as the session's own clone mounts are.
fn service_spec(
    config: &DevcontainerConfig,
    s: &PlannedService,
    clone: &Path,
    plan: &[PlannedService],
) -> Result<ServiceSpec> {
    let refuse = |what: &str| {
        invalid(
            config,
            format!(
                "services.{}: {what} is not run on a session's services",
                s.name
            ),
        )
    };
    if s.build.is_some() {
        return Err(refuse("build (only the session's own service is built)"));
    }
    let image = s
        .image
        .clone()
        .ok_or_else(|| refuse("a service without image"))?;
    let mut volumes = Vec::new();
    let mut binds = Vec::new();
    let mut tmpfs = s.tmpfs.clone();
    for mount in &s.mounts {
        let bind = |source| BindMount {
            source,
            target: mount.target.clone(),
            read_only: mount.read_only,
        };
        match &mount.source {
            MountSource::Volume(Some(name)) => volumes.push(VolumeMount {
                volume: name.clone(),
                target: mount.target.clone(),
                read_only: mount.read_only,
            }),
            MountSource::Tmpfs => tmpfs.push(mount.target.clone()),
            MountSource::Volume(None) => tmpfs.push(mount.target.clone()),
            MountSource::Project(relative) => {
                verify_in_clone(clone, relative).map_err(|e| {
                    let why = format!("services.{}.volumes: {}: {e}", s.name, mount.target);
                    invalid(config, why)
                })?;
                binds.push(bind(BindSource::Clone(relative.clone())));
            }
            MountSource::Host(path) => binds.push(bind(BindSource::Host(path.clone()))),
        }
    }
    Ok(ServiceSpec {
        name: s.name.clone(),
        image,
        environment: s.environment.clone(),
        command: s.command.clone(),
        entrypoint: s.entrypoint.clone(),
        user: s.user.clone(),
        working_dir: s.working_dir.clone(),
        healthcheck: s.healthcheck.as_ref().map(healthcheck),
        volumes,
        binds,
        privileges: set_namespaces(config, s, plan)?,
        tmpfs,
        labels: s.labels.clone(),
        depends_on: dependencies(s),
    })
}

/// The reading writes another service's namespace as `container:<service>`; in the set it
/// is that service's container (`service:<service>`), never an engine container of that name,
/// and it must be one started before this one (not the session's own, started last).
fn set_namespaces(
    config: &DevcontainerConfig,
    s: &PlannedService,
    plan: &[PlannedService],
) -> Result<ContainerPrivileges> {
    let mut out = s.privileges.clone();
    let earlier: Vec<&str> = plan
        .iter()
        .take_while(|p| p.name != s.name)
        .map(|p| p.name.as_str())
        .collect();
    for (kind, mode) in out.namespaces.iter_mut() {
        let Some(other) = mode.strip_prefix("container:") else {
            continue;
        };
        if !plan.iter().any(|p| p.name == other) {
            continue;
        }
        let own = config.compose.as_ref().and_then(|c| c.service.as_deref());
        if !earlier.contains(&other) || Some(other) == own {
            let why = format!(
                "services.{}: the {kind} namespace of service '{other}', which is not started before it",
                s.name
            );
            return Err(invalid(config, why));
        }
        *mode = format!("service:{other}");
    }
    Ok(out)
}

fn dependencies(s: &PlannedService) -> Vec<Dependency> {
    s.depends_on
        .iter()
        .map(|d| Dependency {
            service: d.service.clone(),
            condition: d.condition,
        })
        .collect()
}

fn healthcheck(h: &compose::Healthcheck) -> Healthcheck {
    let ms = |v: Option<u64>| v.map(Duration::from_millis);
    Healthcheck {
        test: h.test.clone(),
        interval: ms(h.interval_ms),
        timeout: ms(h.timeout_ms),
        retries: h.retries.map(|r| u32::try_from(r).unwrap_or(u32::MAX)),
        start_period: ms(h.start_period_ms),
    }
}

fn build_config(build: &ServiceBuild) -> BuildConfig {
    BuildConfig {
        dockerfile: build.dockerfile.clone(),
        context: build.context.clone(),
        args: build.args.clone(),
        target: build.target.clone(),
    }
}

fn invalid(config: &DevcontainerConfig, why: String) -> Error {
    Error::new(
        ErrorCode::Devcontainer,
        format!("{}: {why}", config.config_path.display()),
    )
}

#[cfg(test)]
#[path = "compose_config_tests.rs"]
mod tests;
