//! The keys of a compose service that reach beyond its session, checked against the host's
//! trust with the same check devcontainer.json's privileges get (`Trust::check_privileges`),
//! and `network_mode`, which the one sealed namespace of a session decides.

use serde_yaml::{Mapping, Value};

use crate::runtime::ContainerPrivileges;
use crate::session_settings::{Grant, Refusal, Trust};

/// What the checked keys of one service come to.
#[derive(Debug, Default)]
pub struct CheckedService {
    /// What it asks for; all of it granted when `refusals` is empty.
    pub privileges: ContainerPrivileges,
    pub refusals: Vec<Refusal>,
    pub warnings: Vec<String>,
    /// `network_mode: service:<name>`.
    pub network_service: Option<String>,
}

fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Sequence(items)) => items.iter().filter_map(scalar).collect(),
        Some(other) => scalar(other).into_iter().collect(),
        None => Vec::new(),
    }
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn truthy(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

fn device_text(value: &Value) -> Option<String> {
    match value {
        Value::Mapping(long) => {
            let part = |k: &str| long.get(k).and_then(scalar);
            let mut text = part("source")?;
            for k in ["target", "permissions"] {
                if let Some(p) = part(k) {
                    text = format!("{text}:{p}");
                }
            }
            Some(text)
        }
        other => scalar(other),
    }
}

/// `Err` when the service asks for a network namespace no trust opens.
pub fn check_service(name: &str, raw: &Mapping, trust: &Trust) -> Result<CheckedService, String> {
    let field = format!("services.{name}");
    let mut out = CheckedService::default();
    let asked = &mut out.privileges;
    asked.privileged = truthy(raw.get("privileged"));
    asked.cap_add = strings(raw.get("cap_add"));
    asked.cap_drop = strings(raw.get("cap_drop"));
    asked.security_opt = strings(raw.get("security_opt"));
    if let Some(Value::Sequence(devices)) = raw.get("devices") {
        asked.devices = devices.iter().filter_map(device_text).collect();
    }
    for (key, kind) in [
        ("pid", "pid"),
        ("ipc", "ipc"),
        ("uts", "uts"),
        ("userns_mode", "userns"),
        ("cgroup", "cgroupns"),
    ] {
        if let Some(mode) = raw.get(key).and_then(scalar) {
            // Another service's namespace is another container's.
            let mode = match mode.strip_prefix("service:") {
                Some(other) => format!("container:{other}"),
                None => mode,
            };
            asked.namespaces.insert(kind.to_string(), mode);
        }
    }
    out.refusals = trust.check_privileges(&field, &out.privileges, None);
    for (key, what) in [
        ("device_cgroup_rules", "device cgroup rules"),
        ("gpus", "GPUs"),
    ] {
        let present = raw
            .get(key)
            .is_some_and(|v| !v.is_null() && v != &Value::Sequence(vec![]));
        if present && !trust.devices {
            out.refusals.push(Refusal::new(
                &format!("{field}.{key}"),
                what,
                Grant::Flag("devices"),
            ));
        } else if present {
            out.warnings
                .push(format!("compose: {field}.{key} is not applied"));
        }
    }
    if truthy(raw.get("use_api_socket")) {
        if trust.engine_socket {
            out.warnings
                .push(format!("compose: {field}.use_api_socket is not applied"));
        } else {
            out.refusals.push(Refusal::new(
                &format!("{field}.use_api_socket"),
                "the engine's socket",
                Grant::Flag("engineSocket"),
            ));
        }
    }
    if let Some(mode) = raw.get("network_mode").and_then(scalar) {
        if mode == "host" || mode.starts_with("container:") {
            return Err(format!(
                "{field}.network_mode: '{mode}' is refused: a session's services share one sealed network namespace, which no trust option opens"
            ));
        }
        match mode.strip_prefix("service:") {
            Some(other) => out.network_service = Some(other.to_string()),
            None => out.warnings.push(format!(
                "compose: {field}.network_mode '{mode}' is ignored: a session's services share one sealed network namespace"
            )),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Mapping {
        serde_yaml::from_str(text).unwrap()
    }

    fn allows(checked: &CheckedService) -> Vec<String> {
        checked.refusals.iter().map(|r| r.allow.clone()).collect()
    }

    #[test]
    fn every_privilege_is_refused_by_name_without_trust() {
        let asked = raw(
            "{privileged: true, cap_add: [SYS_PTRACE], security_opt: ['seccomp:unconfined', no-new-privileges], devices: [/dev/kvm, {source: /dev/fuse, target: /dev/fuse, permissions: rwm}], pid: host, ipc: 'service:db', uts: host, userns_mode: host, cgroup: host, device_cgroup_rules: ['c 1:3 mr'], gpus: all, use_api_socket: true}",
        );
        let checked = check_service("app", &asked, &Trust::default()).unwrap();
        assert_eq!(
            allows(&checked),
            [
                "privileged: true",
                "capabilities: [\"SYS_PTRACE\"]",
                "securityOptions: true",
                "devices: true",
                "hostNamespaces: true",
                "devices: true",
                "devices: true",
                "engineSocket: true"
            ]
        );
        assert!(checked.refusals[3].what.contains("/dev/fuse:/dev/fuse:rwm"));
        let namespaces = &checked.refusals[4].what;
        for mode in [
            "pid=host",
            "ipc=container:db",
            "uts=host",
            "userns=host",
            "cgroupns=host",
        ] {
            assert!(namespaces.contains(mode), "{namespaces}");
        }
        assert_eq!(checked.refusals[0].field, "services.app");
    }

    #[test]
    fn granted_privileges_are_kept() {
        let asked = raw("{privileged: true, cap_add: [NET_ADMIN], cap_drop: [ALL], security_opt: [no-new-privileges]}");
        let trust = Trust {
            privileged: true,
            capabilities: vec!["NET_ADMIN".into()],
            ..Default::default()
        };
        let checked = check_service("app", &asked, &trust).unwrap();
        assert!(checked.refusals.is_empty());
        assert!(checked.privileges.privileged);
        assert_eq!(checked.privileges.cap_add, ["NET_ADMIN"]);
        assert_eq!(checked.privileges.cap_drop, ["ALL"]);
    }

    #[test]
    fn network_modes() {
        let everything = Trust {
            host_namespaces: true,
            ..Default::default()
        };
        for mode in ["host", "container:abc"] {
            let e = check_service(
                "app",
                &raw(&format!("{{network_mode: '{mode}'}}")),
                &everything,
            )
            .unwrap_err();
            assert!(e.contains(&format!("'{mode}' is refused")), "{e}");
        }
        let shared = check_service(
            "app",
            &raw("{network_mode: 'service:db'}"),
            &Trust::default(),
        )
        .unwrap();
        assert_eq!(shared.network_service.as_deref(), Some("db"));
        assert!(shared.warnings.is_empty());
        let bridge =
            check_service("app", &raw("{network_mode: bridge}"), &Trust::default()).unwrap();
        assert!(bridge.warnings[0].contains("network_mode 'bridge' is ignored"));
    }
}
