//! A container config as a Pod: one container named `session`, nothing of the cluster
//! reachable from it that the config did not ask for (no service account token, no service
//! links, no privilege escalation, capabilities dropped but a root session's own, seccomp
//! `RuntimeDefault`), and what Kubernetes cannot give per container refused by name
//! (`UNSUPPORTED`) before anything is made, never silently dropped.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Capabilities, Container, EmptyDirVolumeSource, EnvVar, HostAlias, Pod, PodSecurityContext,
    PodSpec, ResourceRequirements, SeccompProfile, SecurityContext, Sysctl, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::pod_labels::{is_subdomain, split_labels};
use crate::container_runtime::ContainerConfig;
use crate::engine::PullPolicy;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::{sandbox_command_after, MountKind};

/// The one container of a session Pod.
pub const CONTAINER: &str = "session";
/// The session agent's folder in every session Pod (an `emptyDir`: a read-only image or
/// root file system still takes it).
pub const AGENT_DIR: &str = "/.container-isolation";
/// Selects the Pods the deny-all NetworkPolicy covers (`network: 'none'`).
pub const NETWORK_LABEL: &str = "dev.container-isolation.network";

/// What a root session keeps of Linux's capabilities (Docker's default set, less raw
/// sockets, device nodes, chroot and audit): owning and writing its files, switching users,
/// signalling its processes, binding low ports.
const SESSION_CAPABILITIES: [&str; 8] = [
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "SETGID",
    "SETUID",
    "NET_BIND_SERVICE",
];

/// Where and how the Pod is placed: what the runtime adds to the config.
pub struct PodPlacement<'a> {
    pub namespace: &'a str,
    pub runtime_class: Option<&'a str>,
    /// The host process's Lease, for `'process'` lifetimes: the Pod goes with it.
    pub owner: Option<OwnerReference>,
    /// The runtime's pull policy, where the config names none.
    pub pull: PullPolicy,
}

/// The Pod for `config`, named `name`, with `labels` (ours and the caller's).
pub fn session_pod(
    config: &ContainerConfig,
    name: &str,
    image: &str,
    labels: &BTreeMap<String, String>,
    placement: &PodPlacement<'_>,
) -> Result<Pod> {
    check_supported(config, name)?;
    if !is_subdomain(name) || name.len() > 63 {
        return Err(Error::invalid_argument(format!(
            "container name '{name}' cannot name a Pod: use at most 63 lowercase letters, digits, '-' and '.', a letter or digit at both ends"
        )));
    }
    let mut pairs = labels.clone();
    if config.network.as_deref() == Some("none") {
        pairs.insert(NETWORK_LABEL.to_string(), "none".to_string());
    }
    let (labels, annotations) = split_labels(&pairs);
    let (run_as_user, run_as_group) = numeric_user(config.user.as_deref(), name)?;
    let (volumes, volume_mounts) = pod_volumes(config);
    let container = Container {
        name: CONTAINER.to_string(),
        image: Some(image.to_string()),
        image_pull_policy: Some(pull_policy(config.pull.unwrap_or(placement.pull)).to_string()),
        command: main_command(config),
        args: config
            .image_arguments
            .clone()
            .filter(|_| config.image_command),
        working_dir: Some(config.working_directory.clone()),
        env: Some(env_vars(&config.environment)),
        resources: resources(config),
        security_context: Some(container_security(config, run_as_user, run_as_group)),
        volume_mounts: Some(volume_mounts),
        ..Default::default()
    };
    let spec = PodSpec {
        containers: vec![container],
        restart_policy: Some(restart_policy(config).to_string()),
        automount_service_account_token: Some(false),
        enable_service_links: Some(false),
        share_process_namespace: Some(config.init != Some(false)),
        termination_grace_period_seconds: Some(10),
        runtime_class_name: placement.runtime_class.map(str::to_string),
        hostname: config.hostname.clone(),
        host_aliases: host_aliases(&config.extra_hosts)?,
        node_selector: node_selector(config.platform.as_deref()),
        security_context: Some(PodSecurityContext {
            seccomp_profile: Some(SeccompProfile {
                type_: "RuntimeDefault".to_string(),
                localhost_profile: None,
            }),
            sysctls: (!config.sysctls.is_empty()).then(|| {
                config
                    .sysctls
                    .iter()
                    .map(|(k, v)| Sysctl {
                        name: k.clone(),
                        value: v.clone(),
                    })
                    .collect()
            }),
            ..Default::default()
        }),
        volumes: Some(volumes),
        ..Default::default()
    };
    Ok(Pod {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(placement.namespace.to_string()),
            labels: Some(labels),
            annotations: Some(annotations),
            owner_references: placement.owner.clone().map(|o| vec![o]),
            ..Default::default()
        },
        spec: Some(spec),
        status: None,
    })
}

/// Variables as a container's `env`.
pub(super) fn env_vars(variables: &BTreeMap<String, String>) -> Vec<EnvVar> {
    variables
        .iter()
        .map(|(k, v)| EnvVar {
            name: k.clone(),
            value: Some(v.clone()),
            value_from: None,
        })
        .collect()
}

/// What a Pod cannot do that the config asks, by option name.
fn check_supported(config: &ContainerConfig, name: &str) -> Result<()> {
    let refuse = |what: &str, why: &str| {
        Err(Error::new(
            ErrorCode::Unsupported,
            format!("container '{name}': {what} is not supported on Kubernetes: {why}"),
        ))
    };
    if let Some(mount) = config.mounts.iter().find(|m| m.kind != MountKind::Tmpfs) {
        return refuse(
            &format!("the {} mount of '{}'", mount.kind.as_str(), mount.target),
            "the host's folders are not on the cluster's nodes (sessions copy their clone in instead)",
        );
    }
    if config.resources.pids.is_some() {
        return refuse(
            "resources.pids",
            "Kubernetes limits processes per node (the kubelet's podPidsLimit), not per Pod",
        );
    }
    if config.resources.nofile.is_some() {
        return refuse(
            "resources.nofile",
            "a Pod's open-file limit is the node's container runtime's",
        );
    }
    if config.cpu_shares.is_some() {
        return refuse("cpuShares", "use resources.cpus");
    }
    if !config.ports.is_empty() {
        return refuse(
            "ports",
            "a Pod's ports are reached by port-forward, not published on the host",
        );
    }
    if config.healthcheck.is_some() {
        return refuse("a healthcheck", "not yet mapped onto a readiness probe");
    }
    if config.service_set.is_some() {
        return refuse("a compose service set", "not yet on Kubernetes");
    }
    if config.egress.is_some() {
        return refuse(
            "an egress policy",
            "the session relay needs the agent, not yet on Kubernetes",
        );
    }
    let p = &config.privileges;
    if p.privileged
        || !p.devices.is_empty()
        || !p.namespaces.is_empty()
        || !p.security_opt.is_empty()
    {
        return refuse(
            "privileged, devices, namespaces or securityOpt",
            "a session Pod never gets them",
        );
    }
    match config.network.as_deref() {
        None | Some("none") => Ok(()),
        Some(other) => refuse(
            &format!("network '{other}'"),
            "a Pod has the cluster's network, or none ('none')",
        ),
    }
}

/// The keep-alive for a sandbox (after its startup commands), the job's command, or the
/// image's own entrypoint.
fn main_command(config: &ContainerConfig) -> Option<Vec<String>> {
    match &config.command {
        Some(command) => Some(command.clone()),
        None if config.image_command => config.image_entrypoint.clone().filter(|e| !e.is_empty()),
        None => Some(sandbox_command_after(&config.startup_commands)),
    }
}

pub(super) fn pull_policy(pull: PullPolicy) -> &'static str {
    match pull {
        PullPolicy::Missing => "IfNotPresent",
        PullPolicy::Always => "Always",
        PullPolicy::Never => "Never",
    }
}

fn restart_policy(config: &ContainerConfig) -> &'static str {
    use crate::container_runtime::RestartPolicy;
    match config.restart_policy {
        None | Some(RestartPolicy::No) => "Never",
        Some(RestartPolicy::OnFailure) => "OnFailure",
        Some(RestartPolicy::Always | RestartPolicy::UnlessStopped) => "Always",
    }
}

/// `uid[:gid]`; a user by name would need the image's `/etc/passwd`, which the cluster does
/// not read for us.
pub(super) fn numeric_user(user: Option<&str>, name: &str) -> Result<(Option<i64>, Option<i64>)> {
    let Some(user) = user.filter(|u| !u.is_empty()) else {
        return Ok((None, None));
    };
    let (uid, gid) = match user.split_once(':') {
        Some((uid, gid)) => (uid, Some(gid)),
        None => (user, None),
    };
    let number = |text: &str| text.parse::<u32>().ok().map(i64::from);
    match (number(uid), gid.map(number)) {
        (Some(uid), None) => Ok((Some(uid), None)),
        (Some(uid), Some(Some(gid))) => Ok((Some(uid), Some(gid))),
        _ => Err(Error::new(
            ErrorCode::Unsupported,
            format!("container '{name}': user '{user}' is not supported on Kubernetes: give a numeric uid[:gid]"),
        )),
    }
}

pub(super) fn container_security(
    config: &ContainerConfig,
    uid: Option<i64>,
    gid: Option<i64>,
) -> SecurityContext {
    let p = &config.privileges;
    let dropped = |cap: &str| {
        p.cap_drop
            .iter()
            .any(|d| d.eq_ignore_ascii_case(cap) || d.eq_ignore_ascii_case("ALL"))
    };
    let mut add: Vec<String> = SESSION_CAPABILITIES
        .iter()
        .filter(|c| !dropped(c))
        .map(|c| c.to_string())
        .collect();
    for cap in &p.cap_add {
        let cap = cap.trim_start_matches("CAP_").to_ascii_uppercase();
        if !add.contains(&cap) {
            add.push(cap);
        }
    }
    SecurityContext {
        allow_privilege_escalation: Some(false),
        privileged: Some(false),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".to_string()]),
            add: Some(add),
        }),
        run_as_user: uid,
        run_as_group: gid,
        ..Default::default()
    }
}

/// Memory and CPU as limits and equal requests (the scheduler places by requests).
pub(super) fn resources(config: &ContainerConfig) -> Option<ResourceRequirements> {
    let mut limits = BTreeMap::new();
    if let Some(memory) = config.resources.memory.or(config.memory) {
        limits.insert("memory".to_string(), Quantity(memory.to_string()));
    }
    if let Some(nano) = config.resources.nano_cpus {
        limits.insert(
            "cpu".to_string(),
            Quantity(format!("{}m", (nano / 1_000_000).max(1))),
        );
    }
    (!limits.is_empty()).then(|| ResourceRequirements {
        requests: Some(limits.clone()),
        limits: Some(limits),
        ..Default::default()
    })
}

/// The agent's folder, and tmpfs mounts as memory-backed emptyDir volumes.
fn pod_volumes(config: &ContainerConfig) -> (Vec<Volume>, Vec<VolumeMount>) {
    let mut volumes = vec![Volume {
        name: "container-isolation-agent".to_string(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    }];
    let mut mounts = vec![VolumeMount {
        name: "container-isolation-agent".to_string(),
        mount_path: AGENT_DIR.to_string(),
        ..Default::default()
    }];
    for (i, mount) in config
        .mounts
        .iter()
        .filter(|m| m.kind == MountKind::Tmpfs)
        .enumerate()
    {
        let name = format!("tmpfs-{i}");
        volumes.push(Volume {
            name: name.clone(),
            empty_dir: Some(EmptyDirVolumeSource {
                medium: Some("Memory".to_string()),
                size_limit: mount.tmpfs_size.map(|bytes| Quantity(bytes.to_string())),
            }),
            ..Default::default()
        });
        mounts.push(VolumeMount {
            name,
            mount_path: mount.target.clone(),
            read_only: Some(mount.readonly),
            ..Default::default()
        });
    }
    (volumes, mounts)
}

/// `name:address` lines as host aliases, grouped by address.
fn host_aliases(lines: &[String]) -> Result<Option<Vec<HostAlias>>> {
    let mut by_address: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in lines {
        let (name, address) = line.split_once(':').ok_or_else(|| {
            Error::invalid_argument(format!("extra host '{line}' is not name:address"))
        })?;
        by_address
            .entry(address.to_string())
            .or_default()
            .push(name.to_string());
    }
    Ok((!by_address.is_empty()).then(|| {
        by_address
            .into_iter()
            .map(|(ip, hostnames)| HostAlias {
                ip,
                hostnames: Some(hostnames),
            })
            .collect()
    }))
}

/// `os/arch[/variant]` as the well-known node labels.
fn node_selector(platform: Option<&str>) -> Option<BTreeMap<String, String>> {
    let mut parts = platform?.split('/');
    let os = parts.next()?;
    let arch = parts.next()?;
    Some(BTreeMap::from([
        ("kubernetes.io/os".to_string(), os.to_string()),
        ("kubernetes.io/arch".to_string(), arch.to_string()),
    ]))
}

#[cfg(test)]
#[path = "session_pod_tests.rs"]
mod tests;
