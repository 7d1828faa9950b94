//! What a session does with each key of a compose service (docs/api.md, "Compose
//! devcontainers"): read into the plan, checked against the host's trust, or warned about by
//! name and ignored.

/// Read into the plan (through the compose specification's typed model).
pub const MAPPED: &[&str] = &[
    "image",
    "build",
    "environment",
    "env_file",
    "command",
    "entrypoint",
    "user",
    "working_dir",
    "healthcheck",
    "depends_on",
    "ports",
    "expose",
    "volumes",
    "tmpfs",
    "labels",
    "init",
    "read_only",
    "platform",
    "cap_drop",
];

/// Checked against the trust (service_checks.rs), or decided there.
pub const CHECKED: &[&str] = &[
    "privileged",
    "cap_add",
    "security_opt",
    "devices",
    "device_cgroup_rules",
    "gpus",
    "pid",
    "ipc",
    "uts",
    "userns_mode",
    "cgroup",
    "network_mode",
    "use_api_socket",
    "profiles",
];

/// Warned about by name and ignored, and why.
pub const IGNORED: &[(&str, &str)] = &[
    (
        "networks",
        "a session's services share one sealed network namespace",
    ),
    (
        "extra_hosts",
        "service names resolve in every service; nothing else resolves",
    ),
    (
        "dns",
        "no DNS server is reachable; service names resolve through the hosts file",
    ),
    ("dns_search", "no DNS server is reachable"),
    ("dns_opt", "no DNS server is reachable"),
    ("hostname", "a session names its containers"),
    ("domainname", "a session names its containers"),
    ("mac_address", "there is no network interface but loopback"),
    ("links", "service names resolve in every service"),
    (
        "external_links",
        "no container outside the session is reachable",
    ),
    ("container_name", "a session names its containers"),
    (
        "secrets",
        "no file or variable of the host is given to a service",
    ),
    (
        "configs",
        "no file or variable of the host is given to a service",
    ),
    (
        "sysctls",
        "the shared namespace's settings are the session's",
    ),
    ("cgroup_parent", "a session's limits apply"),
    ("ulimits", "a session's limits apply"),
    ("shm_size", "a session's limits apply"),
    ("oom_kill_disable", "a session's limits apply"),
    ("oom_score_adj", "a session's limits apply"),
    ("mem_limit", "a session's limits apply"),
    ("mem_reservation", "a session's limits apply"),
    ("mem_swappiness", "a session's limits apply"),
    ("memswap_limit", "a session's limits apply"),
    ("cpu_count", "a session's limits apply"),
    ("cpu_percent", "a session's limits apply"),
    ("cpu_shares", "a session's limits apply"),
    ("cpu_period", "a session's limits apply"),
    ("cpu_quota", "a session's limits apply"),
    ("cpu_rt_runtime", "a session's limits apply"),
    ("cpu_rt_period", "a session's limits apply"),
    ("cpus", "a session's limits apply"),
    ("cpuset", "a session's limits apply"),
    ("pids_limit", "a session's limits apply"),
    ("blkio_config", "a session's limits apply"),
    ("deploy", "a session's limits apply"),
    ("storage_opt", "a session's limits apply"),
    ("runtime", "the engine's default runtime runs every service"),
    ("isolation", "the engine's default isolation applies"),
    ("group_add", "not applied"),
    (
        "stop_signal",
        "a session stops its services as it stops its container",
    ),
    (
        "stop_grace_period",
        "a session stops its services as it stops its container",
    ),
    ("restart", "a session's lifecycle decides when services run"),
    ("scale", "each service runs one container"),
    ("pull_policy", "the host's pull policy applies"),
    ("logging", "the engine's default logging applies"),
    ("attach", "not applied"),
    ("tty", "not applied"),
    ("stdin_open", "not applied"),
    ("develop", "not applied"),
    ("annotations", "not applied"),
    ("credential_spec", "not applied"),
    ("volumes_from", "a service mounts only its own volumes"),
    ("label_file", "not read"),
    ("post_start", "not run"),
    ("pre_stop", "not run"),
    ("models", "not provided"),
    ("provider", "not run"),
];

/// What a session does with the service key `key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyUse {
    Mapped,
    Checked,
    Ignored(&'static str),
    /// Not a compose service key.
    Unknown,
    /// An `x-` extension: ignored silently.
    Extension,
}

pub fn key_use(key: &str) -> KeyUse {
    if MAPPED.contains(&key) {
        KeyUse::Mapped
    } else if CHECKED.contains(&key) {
        KeyUse::Checked
    } else if let Some((_, why)) = IGNORED.iter().find(|(k, _)| *k == key) {
        KeyUse::Ignored(why)
    } else if key.starts_with("x-") {
        KeyUse::Extension
    } else {
        KeyUse::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_one_use() {
        let ignored: Vec<&str> = IGNORED.iter().map(|(k, _)| *k).collect();
        for key in MAPPED.iter().chain(CHECKED).chain(&ignored) {
            let uses = [
                MAPPED.contains(key),
                CHECKED.contains(key),
                ignored.contains(key),
            ];
            assert_eq!(uses.iter().filter(|u| **u).count(), 1, "{key}");
        }
        assert_eq!(key_use("x-anything"), KeyUse::Extension);
        assert_eq!(key_use("imagee"), KeyUse::Unknown);
        assert_eq!(
            key_use("sysctls"),
            KeyUse::Ignored("the shared namespace's settings are the session's")
        );
    }
}
