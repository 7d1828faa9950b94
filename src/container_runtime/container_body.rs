//! A `ContainerConfig` as the Engine API's create request: mounts of every kind, and the
//! settings that reach beyond the container exactly as the config carries them.

use std::collections::BTreeMap;

use bollard::models::{
    ContainerCreateBody, DeviceMapping, HostConfig, HostConfigCgroupnsModeEnum, Mount,
    MountBindOptions, MountBindOptionsPropagationEnum, MountTmpfsOptions, MountType,
    MountVolumeOptions, RestartPolicyNameEnum,
};

use super::container_config::{ContainerConfig, RestartPolicy};
use crate::runtime::engine_ports;
use crate::runtime::{ContainerMount, MountKind};

fn engine_mount(m: &ContainerMount) -> Mount {
    let mut mount = Mount {
        target: Some(m.target.clone()),
        read_only: Some(m.readonly),
        ..Default::default()
    };
    match m.kind {
        MountKind::Bind => {
            mount.typ = Some(MountType::BIND);
            mount.source = Some(m.source.clone());
            mount.bind_options = m.propagation.as_ref().map(|p| MountBindOptions {
                propagation: p.parse::<MountBindOptionsPropagationEnum>().ok(),
                ..Default::default()
            });
        }
        MountKind::Volume => {
            mount.typ = Some(MountType::VOLUME);
            mount.source = (!m.source.is_empty()).then(|| m.source.clone());
            mount.volume_options = m.no_copy.then(|| MountVolumeOptions {
                no_copy: Some(true),
                ..Default::default()
            });
        }
        MountKind::Tmpfs => {
            mount.typ = Some(MountType::TMPFS);
            mount.tmpfs_options = Some(MountTmpfsOptions {
                size_bytes: m.tmpfs_size,
                mode: m.tmpfs_mode,
                ..Default::default()
            });
        }
    }
    mount
}

/// `HOST[:CONTAINER[:PERMISSIONS]]`, as `docker run --device` reads it.
fn device(text: &str) -> DeviceMapping {
    let mut parts = text.splitn(3, ':');
    let host = parts.next().unwrap_or_default().to_string();
    let container = parts.next().filter(|c| !c.is_empty()).map(str::to_string);
    DeviceMapping {
        path_in_container: Some(container.unwrap_or_else(|| host.clone())),
        path_on_host: Some(host),
        cgroup_permissions: Some(parts.next().unwrap_or("rwm").to_string()),
    }
}

fn listed(items: &[String]) -> Option<Vec<String>> {
    (!items.is_empty()).then(|| items.to_vec())
}

fn host_config(config: &ContainerConfig) -> HostConfig {
    let p = &config.privileges;
    let namespace = |kind: &str| p.namespaces.get(kind).cloned();
    let mut host = HostConfig {
        init: Some(config.init.unwrap_or(true)),
        mounts: Some(config.mounts.iter().map(engine_mount).collect()),
        memory: config.memory,
        cpu_shares: config.cpu_shares,
        network_mode: config.network.clone(),
        privileged: p.privileged.then_some(true),
        cap_add: listed(&p.cap_add),
        cap_drop: listed(&p.cap_drop),
        security_opt: listed(&p.security_opt),
        devices: (!p.devices.is_empty()).then(|| p.devices.iter().map(|d| device(d)).collect()),
        pid_mode: namespace("pid"),
        ipc_mode: namespace("ipc"),
        uts_mode: namespace("uts"),
        userns_mode: namespace("userns"),
        cgroupns_mode: namespace("cgroupns")
            .and_then(|m| m.parse::<HostConfigCgroupnsModeEnum>().ok()),
        port_bindings: engine_ports(&config.ports).map(|(_, bindings)| bindings),
        restart_policy: config.restart_policy.map(restart_policy),
        sysctls: (!config.sysctls.is_empty()).then(|| config.sysctls.clone().into_iter().collect()),
        extra_hosts: listed(&config.extra_hosts),
        ..Default::default()
    };
    config.resources.apply(&mut host);
    host
}

fn restart_policy(policy: RestartPolicy) -> bollard::models::RestartPolicy {
    let name = match policy {
        RestartPolicy::No => RestartPolicyNameEnum::NO,
        RestartPolicy::UnlessStopped => RestartPolicyNameEnum::UNLESS_STOPPED,
        RestartPolicy::Always => RestartPolicyNameEnum::ALWAYS,
        RestartPolicy::OnFailure => RestartPolicyNameEnum::ON_FAILURE,
    };
    bollard::models::RestartPolicy {
        name: Some(name),
        maximum_retry_count: None,
    }
}

pub fn create_body(
    config: &ContainerConfig,
    image: &str,
    labels: BTreeMap<String, String>,
    entrypoint: Option<Vec<String>>,
) -> ContainerCreateBody {
    let env = config
        .environment
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let image_command = config.command.is_none() && config.image_command;
    let cmd = match &entrypoint {
        Some(_) if !image_command => Some(Vec::new()),
        _ => config.image_arguments.clone(),
    };
    ContainerCreateBody {
        image: Some(image.to_string()),
        working_dir: Some(config.working_directory.clone()),
        entrypoint,
        cmd,
        env: Some(env),
        labels: Some(labels.into_iter().collect()),
        user: config.user.clone(),
        hostname: config.hostname.clone(),
        exposed_ports: engine_ports(&config.ports).map(|(exposed, _)| exposed),
        healthcheck: config.healthcheck.as_ref().map(|h| h.engine()),
        attach_stdin: Some(false),
        open_stdin: Some(false),
        tty: Some(false),
        host_config: Some(host_config(config)),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_read_as_docker_reads_them() {
        let d = device("/dev/kvm");
        assert_eq!(d.path_in_container.as_deref(), Some("/dev/kvm"));
        assert_eq!(d.cgroup_permissions.as_deref(), Some("rwm"));
        let d = device("/dev/sda:/dev/xvda:r");
        assert_eq!(
            (
                d.path_on_host.as_deref(),
                d.path_in_container.as_deref(),
                d.cgroup_permissions.as_deref()
            ),
            (Some("/dev/sda"), Some("/dev/xvda"), Some("r"))
        );
    }

    #[test]
    fn resources_reach_the_host_config_and_memory_alone_keeps_the_engines_swap() {
        let mut config = ContainerConfig {
            working_directory: "/w".into(),
            memory: Some(64 << 20),
            ..Default::default()
        };
        let host = host_config(&config);
        assert_eq!((host.memory, host.memory_swap), (Some(64 << 20), None));
        assert_eq!(host.pids_limit, None);
        config.resources.memory = Some(64 << 20);
        config.resources.pids = Some(256);
        let host = host_config(&config);
        assert_eq!(
            (host.memory, host.memory_swap),
            (Some(64 << 20), Some(64 << 20))
        );
        assert_eq!(host.pids_limit, Some(256));
    }

    #[test]
    fn mounts_of_every_kind() {
        let mut volume = ContainerMount::new(MountKind::Volume, "", "/anon");
        volume.no_copy = true;
        let m = engine_mount(&volume);
        assert_eq!((m.typ, m.source), (Some(MountType::VOLUME), None));
        assert_eq!(m.volume_options.unwrap().no_copy, Some(true));
        let mut tmpfs = ContainerMount::new(MountKind::Tmpfs, "", "/t");
        tmpfs.tmpfs_size = Some(1 << 20);
        assert_eq!(
            engine_mount(&tmpfs).tmpfs_options.unwrap().size_bytes,
            Some(1 << 20)
        );
    }
}
