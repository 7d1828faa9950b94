//! A Compose devcontainer's other services as containers of the session's Pod, which
//! already shares one network namespace: each service a native sidecar (an init container
//! that keeps running) started in dependency order before the session container. A service
//! another waits for as `service_healthy` gets a startup probe from its healthcheck, which
//! holds back the containers after it; one waited for as `service_completed_successfully`
//! is an init container run to its end. Named volumes are the Pod's `emptyDir`s (they last
//! as long as the Pod). What a Pod cannot give a service is refused by name.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::{
    Container, EmptyDirVolumeSource, ExecAction, Pod, Probe, Volume, VolumeMount,
};

use super::session_pod::{
    container_security, env_vars, numeric_user, pull_policy, resources, CONTAINER,
};
use crate::compose_services::{Condition, ServiceSpec, StoredServices};
use crate::container_runtime::ContainerConfig;
use crate::engine::PullPolicy;
use crate::error::{Error, ErrorCode, Result};

/// How often a `service_healthy` dependency's startup probe runs.
const PROBE_PERIOD: Duration = Duration::from_secs(1);

fn refuse(service: &str, what: &str, why: &str) -> Error {
    Error::new(
        ErrorCode::Unsupported,
        format!("compose service '{service}': {what} is not supported on Kubernetes: {why}"),
    )
}

/// The service's name as a container name (lowercase, `_` as `-`), which must be a DNS
/// label other than the session container's.
fn container_name(service: &str) -> Result<String> {
    let name = service.to_ascii_lowercase().replace('_', "-");
    let label = !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !label || name == CONTAINER {
        return Err(refuse(
            service,
            "its name",
            "a Pod's containers are named by DNS labels (letters, digits, '-'), and 'session' is the session's",
        ));
    }
    Ok(name)
}

/// The conditions the session and the services wait for, by service.
fn awaited(services: &StoredServices) -> BTreeMap<&str, BTreeSet<Condition>> {
    let mut awaited: BTreeMap<&str, BTreeSet<Condition>> = BTreeMap::new();
    let all = services
        .services
        .iter()
        .flat_map(|s| &s.depends_on)
        .chain(&services.app_depends_on);
    for dependency in all {
        awaited
            .entry(dependency.service.as_str())
            .or_default()
            .insert(dependency.condition);
    }
    awaited
}

/// The startup probe of a service waited for as healthy: its healthcheck, retried for its
/// start period and its retries' intervals.
fn startup_probe(service: &ServiceSpec) -> Result<Probe> {
    let why =
        "the image's own healthcheck cannot be read on a cluster: give the service a `healthcheck`";
    let check = service
        .healthcheck
        .as_ref()
        .ok_or_else(|| refuse(&service.name, "service_healthy without a healthcheck", why))?;
    let command = check
        .command()
        .ok_or_else(|| refuse(&service.name, "service_healthy with healthcheck NONE", why))?;
    let budget = check.start_period() + check.interval() * check.retries();
    let tries = budget
        .as_secs()
        .div_ceil(PROBE_PERIOD.as_secs())
        .clamp(1, 600);
    Ok(Probe {
        exec: Some(ExecAction {
            command: Some(command),
        }),
        period_seconds: Some(PROBE_PERIOD.as_secs() as i32),
        timeout_seconds: Some(check.timeout().as_secs().clamp(1, 60) as i32),
        failure_threshold: Some(tries as i32),
        ..Default::default()
    })
}

/// The volume name of a compose named volume in the Pod.
fn volume_name(volume: &str) -> String {
    let cleaned: String = volume
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("compose-{}", cleaned.trim_matches('-'))
}

/// One service as a container of the Pod, and the `emptyDir`s it adds.
fn service_container(
    service: &ServiceSpec,
    config: &ContainerConfig,
    pull: PullPolicy,
    conditions: Option<&BTreeSet<Condition>>,
) -> Result<(Container, Vec<Volume>)> {
    let name = container_name(&service.name)?;
    if let Some(bind) = service.binds.first() {
        let why = "the host's folders are not on the cluster's nodes";
        return Err(refuse(
            &service.name,
            &format!("the bind mount of '{}'", bind.target),
            why,
        ));
    }
    let p = &service.privileges;
    if p.privileged
        || !p.devices.is_empty()
        || !p.namespaces.is_empty()
        || !p.security_opt.is_empty()
    {
        let why = "a session Pod never gets them";
        return Err(refuse(
            &service.name,
            "privileged, devices, namespaces or securityOpt",
            why,
        ));
    }
    let (uid, gid) = numeric_user(service.user.as_deref(), &service.name)?;
    let completes = conditions.is_some_and(|c| c.contains(&Condition::CompletedSuccessfully));
    let healthy = conditions.is_some_and(|c| c.contains(&Condition::Healthy));
    if completes && healthy {
        let why = "a service waited for to end cannot also be waited for to be healthy";
        return Err(refuse(
            &service.name,
            "service_healthy and service_completed_successfully",
            why,
        ));
    }
    let mut volumes = Vec::new();
    let mut mounts: Vec<VolumeMount> = service
        .volumes
        .iter()
        .map(|v| VolumeMount {
            name: volume_name(&v.volume),
            mount_path: v.target.clone(),
            read_only: Some(v.read_only),
            ..Default::default()
        })
        .collect();
    for (i, target) in service.tmpfs.iter().enumerate() {
        let volume = format!("{name}-tmpfs-{i}");
        volumes.push(Volume {
            name: volume.clone(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".to_string()),
                size_limit: None,
            }),
            ..Default::default()
        });
        mounts.push(VolumeMount {
            name: volume,
            mount_path: target.clone(),
            ..Default::default()
        });
    }
    let member = ContainerConfig {
        privileges: service.privileges.clone(),
        ..config.clone()
    };
    let container = Container {
        name,
        image: Some(service.image.clone()),
        image_pull_policy: Some(pull_policy(pull).to_string()),
        command: service.entrypoint.clone(),
        args: service.command.clone(),
        working_dir: service.working_dir.clone(),
        env: Some(env_vars(&service.environment)),
        resources: resources(config),
        security_context: Some(container_security(&member, uid, gid)),
        volume_mounts: Some(mounts),
        // A sidecar keeps running beside the session; a run-to-completion service is a
        // plain init container.
        restart_policy: (!completes).then(|| "Always".to_string()),
        startup_probe: healthy.then(|| startup_probe(service)).transpose()?,
        ..Default::default()
    };
    Ok((container, volumes))
}

/// The services added to `pod` as its init containers, in the dependency order they come
/// in, with the volumes they use.
pub fn add_services(
    pod: &mut Pod,
    services: &StoredServices,
    config: &ContainerConfig,
    pull: PullPolicy,
) -> Result<()> {
    let awaited = awaited(services);
    let mut containers = Vec::new();
    let mut volumes = Vec::new();
    let mut named: BTreeSet<String> = BTreeSet::new();
    for service in &services.services {
        let conditions = awaited.get(service.name.as_str());
        let (container, own) = service_container(service, config, pull, conditions)?;
        if containers
            .iter()
            .any(|c: &Container| c.name == container.name)
        {
            let why = "two services map to one container name";
            return Err(refuse(&service.name, "its name", why));
        }
        named.extend(service.volumes.iter().map(|v| volume_name(&v.volume)));
        containers.push(container);
        volumes.extend(own);
    }
    volumes.extend(named.into_iter().map(|name| Volume {
        name,
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    }));
    let Some(spec) = pod.spec.as_mut() else {
        return Ok(());
    };
    spec.init_containers = Some(containers);
    spec.volumes.get_or_insert_with(Vec::new).extend(volumes);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_names_become_container_names_or_are_refused() {
        assert_eq!(container_name("my_DB").unwrap(), "my-db");
        for bad in ["session", "-x", "a.b", ""] {
            assert_eq!(
                container_name(bad).unwrap_err().code,
                ErrorCode::Unsupported,
                "{bad}"
            );
        }
    }

    #[test]
    fn named_volumes_get_pod_volume_names() {
        assert_eq!(volume_name("db_data"), "compose-db-data");
        assert_eq!(volume_name("Cache.v2"), "compose-cache-v2");
    }
}
