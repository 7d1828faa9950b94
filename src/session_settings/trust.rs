//! What a host allows a project's devcontainer.json to reach beyond its session. The
//! config is untrusted input (an agent can rewrite it, a cloned repository wrote it), so
//! by default nothing reaches the host: each such request is refused, naming the field and
//! the option that would allow it.

use std::path::PathBuf;

use crate::error::{Error, ErrorCode};
pub use crate::refusal::{Grant, Refusal};
use crate::runtime::ContainerPrivileges;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    /// Host paths (and everything under them) that bind mounts, `workspaceMount`, and the
    /// build's context and Dockerfile may use outside the session clone and the project.
    pub host_paths: Vec<PathBuf>,
    /// `privileged`, `--privileged`.
    pub privileged: bool,
    /// Capabilities `capAdd`/`--cap-add` may add (`ALL`: any).
    pub capabilities: Vec<String>,
    /// `securityOpt`/`--security-opt` beyond `no-new-privileges`.
    pub security_options: bool,
    /// `--device`.
    pub devices: bool,
    /// The host's or another container's namespaces (`--network host`, `--pid host`, …)
    /// and bind mounts that propagate mounts with the host.
    pub host_namespaces: bool,
    /// A bind mount of the engine's socket, or of a directory holding it.
    pub engine_socket: bool,
    /// `initializeCommand`, which runs on the host.
    pub host_commands: bool,
    /// Host environment variables `${localEnv:…}` and a bare `-e NAME` may read (`*`: all).
    pub local_env: Vec<String>,
    /// Registries (`host[:port]`) the host fetches OCI features from for the config, with
    /// its own credentials for them (`*`: any).
    pub feature_registries: Vec<String>,
}

/// Whether `registry` is in a `featureRegistries` list.
pub fn registry_allowed(allowed: &[String], registry: &str) -> bool {
    allowed
        .iter()
        .any(|r| r == "*" || r.eq_ignore_ascii_case(registry))
}

/// `DEVCONTAINER`: every refusal, one per line.
pub fn refused(config: &str, refusals: &[Refusal]) -> Error {
    let lines: Vec<String> = refusals
        .iter()
        .map(|r| format!("  - {}: {}; allow with trust.{}", r.field, r.what, r.allow))
        .collect();
    let mut error = Error::new(
        ErrorCode::Devcontainer,
        format!(
            "{config} asks for what reaches beyond the session, which the host has not allowed:\n{}",
            lines.join("\n")
        ),
    );
    error.refusals = refusals.to_vec();
    error
}

fn cap_name(cap: &str) -> String {
    let upper = cap.to_ascii_uppercase();
    upper.strip_prefix("CAP_").unwrap_or(&upper).to_string()
}

impl Trust {
    /// This trust with what the older `allowHostCommands: true` granted: host commands
    /// (`initializeCommand`) and `privileged`.
    pub fn with_host_commands_of_old(mut self) -> Trust {
        self.host_commands = true;
        self.privileged = true;
        self
    }

    pub fn allows_capability(&self, cap: &str) -> bool {
        let cap = cap_name(cap);
        self.capabilities
            .iter()
            .map(|c| cap_name(c))
            .any(|c| c == "ALL" || c == cap)
    }

    /// Refusals for what `field` asks in privileges, and for its network mode.
    pub fn check_privileges(
        &self,
        field: &str,
        asked: &ContainerPrivileges,
        network: Option<&str>,
    ) -> Vec<Refusal> {
        let mut out = Vec::new();
        if asked.privileged && !self.privileged {
            out.push(Refusal::new(
                field,
                "privileged mode",
                Grant::Flag("privileged"),
            ));
        }
        let caps: Vec<String> = asked
            .cap_add
            .iter()
            .filter(|c| !self.allows_capability(c))
            .map(|c| cap_name(c))
            .collect();
        if !caps.is_empty() {
            out.push(Refusal::new(
                field,
                format!("capabilities {}", caps.join(", ")),
                Grant::List("capabilities", caps),
            ));
        }
        let loosening: Vec<String> = asked
            .security_opt
            .iter()
            .filter(|o| !is_tightening(o))
            .cloned()
            .collect();
        if !loosening.is_empty() && !self.security_options {
            out.push(Refusal::new(
                field,
                format!("security options {}", loosening.join(", ")),
                Grant::Flag("securityOptions"),
            ));
        }
        if !asked.devices.is_empty() && !self.devices {
            out.push(Refusal::new(
                field,
                format!("host devices {}", asked.devices.join(", ")),
                Grant::Flag("devices"),
            ));
        }
        let network = network.map(|mode| ("network", mode));
        let shared: Vec<String> = network
            .into_iter()
            .chain(
                asked
                    .namespaces
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            )
            .filter(|(_, mode)| reaches_outside(mode))
            .map(|(kind, mode)| format!("{kind}={mode}"))
            .collect();
        if !shared.is_empty() && !self.host_namespaces {
            out.push(Refusal::new(
                field,
                format!("namespaces outside the session ({})", shared.join(", ")),
                Grant::Flag("hostNamespaces"),
            ));
        }
        out
    }

    pub fn check_local_env(&self, denied: &[String]) -> Option<Refusal> {
        (!denied.is_empty()).then(|| {
            Refusal::new(
                "${localEnv}",
                format!(
                    "reads the host's environment variables {}",
                    denied.join(", ")
                ),
                Grant::List("localEnv", denied.to_vec()),
            )
        })
    }
}

/// `no-new-privileges` only takes privileges away.
fn is_tightening(option: &str) -> bool {
    matches!(
        option,
        "no-new-privileges" | "no-new-privileges:true" | "no-new-privileges=true"
    )
}

/// A namespace mode that joins the host's or another container's namespace.
pub fn reaches_outside(mode: &str) -> bool {
    mode == "host"
        || ["container:", "ns:", "slirp4netns:", "pasta:"]
            .iter()
            .any(|p| mode.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_older_allow_host_commands_grants_host_commands_and_privileged_only() {
        let old = Trust::default().with_host_commands_of_old();
        assert!(old.host_commands && old.privileged);
        assert_eq!(
            Trust {
                host_commands: false,
                privileged: false,
                ..old
            },
            Trust::default()
        );
    }

    #[test]
    fn nothing_is_allowed_by_default_and_each_option_allows_its_own() {
        let asked = ContainerPrivileges {
            privileged: true,
            cap_add: vec!["SYS_PTRACE".into(), "cap_net_admin".into()],
            security_opt: vec!["seccomp=unconfined".into(), "no-new-privileges".into()],
            devices: vec!["/dev/kvm".into()],
            namespaces: [("ipc", "private"), ("pid", "container:x")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
            ..Default::default()
        };
        let none = Trust::default().check_privileges("runArgs", &asked, Some("host"));
        let allows: Vec<&str> = none.iter().map(|r| r.allow.as_str()).collect();
        assert_eq!(
            allows,
            [
                "privileged: true",
                "capabilities: [\"SYS_PTRACE\", \"NET_ADMIN\"]",
                "securityOptions: true",
                "devices: true",
                "hostNamespaces: true"
            ]
        );
        assert!(none[4].what.contains("network=host") && none[4].what.contains("pid=container:x"));
        let all = Trust {
            privileged: true,
            capabilities: vec!["CAP_SYS_PTRACE".into(), "NET_ADMIN".into()],
            security_options: true,
            devices: true,
            host_namespaces: true,
            ..Default::default()
        };
        assert!(all
            .check_privileges("runArgs", &asked, Some("host"))
            .is_empty());
        let any = Trust {
            capabilities: vec!["all".into()],
            ..Default::default()
        };
        assert!(any.allows_capability("SYS_ADMIN"));
        let text = refused("/p/.devcontainer/devcontainer.json", &none).message;
        assert!(text.contains("  - runArgs: privileged mode; allow with trust.privileged: true"));
    }

    #[test]
    fn a_refusal_error_carries_each_grant_structured() {
        let asked = ContainerPrivileges {
            cap_add: vec!["cap_sys_ptrace".into()],
            devices: vec!["/dev/kvm".into()],
            ..Default::default()
        };
        let mut refusals = Trust::default().check_privileges("capAdd", &asked, None);
        refusals.extend(Trust::default().check_local_env(&["HOME".to_string()]));
        let error = refused("/p/.devcontainer.json", &refusals);
        assert_eq!(error.code, ErrorCode::Devcontainer);
        let grants: Vec<&Grant> = error.refusals.iter().map(|r| &r.grant).collect();
        assert_eq!(
            grants,
            [
                &Grant::List("capabilities", vec!["SYS_PTRACE".into()]),
                &Grant::Flag("devices"),
                &Grant::List("localEnv", vec!["HOME".into()]),
            ]
        );
        // The message still names each option as a host writes it.
        assert!(error
            .message
            .contains("allow with trust.capabilities: [\"SYS_PTRACE\"]"));
        assert!(error
            .message
            .contains("allow with trust.localEnv: [\"HOME\"]"));
        assert!(Error::new(ErrorCode::Devcontainer, "x").refusals.is_empty());
    }
}
