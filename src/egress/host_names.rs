//! The names engines give the host inside containers: Docker Desktop's
//! `host.docker.internal` and `gateway.docker.internal` (the Mac, or the Windows or Linux
//! desktop, seen from the engine's VM) and Podman's `host.containers.internal`. A session
//! that reaches one reaches the machine it runs on, so such a name counts as the host's,
//! refused before any lookup like the host's own addresses: only an allow entry naming it
//! exactly opens it (`*` and `*.suffix` never do). What it resolves to is still checked.

use super::egress_rule::normal_name;

/// Each name, and whose it is.
const ENGINE_HOST_NAMES: [(&str, &str); 3] = [
    ("host.docker.internal", "Docker Desktop's name for the host"),
    (
        "gateway.docker.internal",
        "Docker Desktop's name for its VM's gateway to the host",
    ),
    ("host.containers.internal", "Podman's name for the host"),
];

/// What `host` (as asked) is, when it is one of the engines' names for the host.
pub fn engine_host_name(host: &str) -> Option<&'static str> {
    let host = normal_name(host);
    ENGINE_HOST_NAMES
        .iter()
        .find(|(name, _)| *name == host)
        .map(|(_, kind)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engines_names_for_the_host_are_known_in_any_spelling() {
        assert_eq!(
            engine_host_name("host.docker.internal"),
            Some("Docker Desktop's name for the host")
        );
        assert!(engine_host_name("HOST.Docker.Internal.").is_some());
        assert!(engine_host_name("gateway.docker.internal").is_some());
        assert!(engine_host_name("host.containers.internal").is_some());
        for other in [
            "docker.internal",
            "x.host.docker.internal",
            "internal",
            "example.com",
        ] {
            assert_eq!(engine_host_name(other), None, "{other}");
        }
    }
}
