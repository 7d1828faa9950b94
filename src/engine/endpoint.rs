//! Where an engine may listen, and the order in which auto-detection tries those places.

use std::fmt;
use std::path::PathBuf;

use super::options::{EngineKind, EngineOptions};
use crate::error::{Error, Result};

/// One address of an Engine API.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Unix(PathBuf),
    /// `http://host:port` (a `tcp://` host is rewritten to this form).
    Http(String),
}

impl Endpoint {
    /// Parses a `DOCKER_HOST`-style URL: `unix://`, `tcp://` or `http://`.
    pub fn parse_host(host: &str) -> Result<Endpoint> {
        if let Some(path) = host.strip_prefix("unix://") {
            if path.is_empty() {
                return Err(Error::invalid_argument(format!(
                    "engine host '{host}' names no socket path"
                )));
            }
            Ok(Endpoint::Unix(PathBuf::from(path)))
        } else if let Some(rest) = host.strip_prefix("tcp://") {
            Ok(Endpoint::Http(format!("http://{rest}")))
        } else if host.starts_with("http://") {
            Ok(Endpoint::Http(host.to_string()))
        } else if host.starts_with('/') {
            Ok(Endpoint::Unix(PathBuf::from(host)))
        } else {
            Err(Error::invalid_argument(format!(
                "engine host '{host}' is not supported: use unix://, tcp:// or http://"
            )))
        }
    }

    pub fn is_unix(&self) -> bool {
        matches!(self, Endpoint::Unix(_))
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Unix(path) => write!(f, "unix://{}", path.display()),
            Endpoint::Http(url) => f.write_str(url),
        }
    }
}

/// An endpoint to probe, with where it came from and the family its location suggests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub endpoint: Endpoint,
    pub source: &'static str,
    pub family_hint: Option<EngineKind>,
}

/// The environment auto-detection reads; a struct so that tests can supply their own.
#[derive(Debug, Clone, Default)]
pub struct DetectionEnv {
    pub docker_host: Option<String>,
    pub container_host: Option<String>,
    pub xdg_runtime_dir: Option<String>,
    pub home: Option<String>,
}

impl DetectionEnv {
    pub fn from_process() -> Self {
        let non_empty = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        DetectionEnv {
            docker_host: non_empty("DOCKER_HOST"),
            container_host: non_empty("CONTAINER_HOST"),
            xdg_runtime_dir: non_empty("XDG_RUNTIME_DIR"),
            home: non_empty("HOME"),
        }
    }
}

/// The endpoints to try, in order. An explicit `socketPath` or `host` is the only candidate.
pub fn candidates(opts: &EngineOptions, env: &DetectionEnv) -> Result<Vec<Candidate>> {
    if let Some(path) = &opts.socket_path {
        let endpoint = Endpoint::parse_host(path)
            .ok()
            .filter(Endpoint::is_unix)
            .unwrap_or_else(|| Endpoint::Unix(PathBuf::from(path)));
        return Ok(vec![Candidate {
            endpoint,
            source: "socketPath option",
            family_hint: None,
        }]);
    }
    if let Some(host) = &opts.host {
        return Ok(vec![Candidate {
            endpoint: Endpoint::parse_host(host)?,
            source: "host option",
            family_hint: None,
        }]);
    }
    let mut list = detected(env);
    if let Some(kind) = opts.kind {
        list.retain(|c| c.family_hint.is_none_or(|hint| hint == kind));
    }
    Ok(list)
}

/// Where an engine's socket usually is: the folder it is under (`None`: absolute), the
/// path, how the path is shown, and which engine puts it there.
type WellKnown = (
    Option<fn(&DetectionEnv) -> Option<&String>>,
    &'static str,
    &'static str,
    EngineKind,
);

const WELL_KNOWN: [WellKnown; 6] = [
    (
        None,
        "/var/run/docker.sock",
        "/var/run/docker.sock",
        EngineKind::Docker,
    ),
    (
        Some(|e| e.xdg_runtime_dir.as_ref()),
        "docker.sock",
        "$XDG_RUNTIME_DIR/docker.sock",
        EngineKind::Docker,
    ),
    (
        Some(|e| e.home.as_ref()),
        ".docker/run/docker.sock",
        "~/.docker/run/docker.sock",
        EngineKind::Docker,
    ),
    (
        Some(|e| e.home.as_ref()),
        ".docker/desktop/docker.sock",
        "~/.docker/desktop/docker.sock",
        EngineKind::Docker,
    ),
    (
        None,
        "/run/podman/podman.sock",
        "/run/podman/podman.sock",
        EngineKind::Podman,
    ),
    (
        Some(|e| e.xdg_runtime_dir.as_ref()),
        "podman/podman.sock",
        "$XDG_RUNTIME_DIR/podman/podman.sock",
        EngineKind::Podman,
    ),
];

/// Auto-detection's candidates: `DOCKER_HOST`, `CONTAINER_HOST`, then the well-known
/// sockets, each endpoint once. An unusable `DOCKER_HOST` is reported as a failed
/// candidate by the prober, not here.
fn detected(env: &DetectionEnv) -> Vec<Candidate> {
    let mut list: Vec<Candidate> = Vec::new();
    let mut push = |endpoint: Endpoint, source: &'static str, hint: Option<EngineKind>| {
        if !list.iter().any(|c| c.endpoint == endpoint) {
            list.push(Candidate {
                endpoint,
                source,
                family_hint: hint,
            });
        }
    };
    for (host, source) in [
        (&env.docker_host, "DOCKER_HOST"),
        (&env.container_host, "CONTAINER_HOST"),
    ] {
        if let Some(endpoint) = host.as_deref().and_then(|h| Endpoint::parse_host(h).ok()) {
            push(endpoint, source, None);
        }
    }
    for (folder, path, source, kind) in WELL_KNOWN {
        let full = match folder {
            None => Some(PathBuf::from(path)),
            Some(folder) => folder(env).map(|dir| PathBuf::from(dir).join(path)),
        };
        if let Some(full) = full {
            push(Endpoint::Unix(full), source, Some(kind));
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> DetectionEnv {
        DetectionEnv {
            docker_host: None,
            container_host: None,
            xdg_runtime_dir: Some("/run/user/1000".into()),
            home: Some("/home/u".into()),
        }
    }

    fn shown(list: &[Candidate]) -> Vec<String> {
        list.iter().map(|c| c.endpoint.to_string()).collect()
    }

    #[test]
    fn default_order_follows_the_contract() {
        let list = candidates(&EngineOptions::default(), &env()).unwrap();
        assert_eq!(
            shown(&list),
            [
                "unix:///var/run/docker.sock",
                "unix:///run/user/1000/docker.sock",
                "unix:///home/u/.docker/run/docker.sock",
                "unix:///home/u/.docker/desktop/docker.sock",
                "unix:///run/podman/podman.sock",
                "unix:///run/user/1000/podman/podman.sock",
            ]
        );
    }

    #[test]
    fn environment_hosts_come_first_and_tcp_becomes_http() {
        let mut e = env();
        e.docker_host = Some("tcp://127.0.0.1:2375".into());
        e.container_host = Some("unix:///tmp/podman.sock".into());
        let list = candidates(&EngineOptions::default(), &e).unwrap();
        assert_eq!(
            list[0].endpoint,
            Endpoint::Http("http://127.0.0.1:2375".into())
        );
        assert_eq!(list[0].source, "DOCKER_HOST");
        assert_eq!(list[1].endpoint, Endpoint::Unix("/tmp/podman.sock".into()));
    }

    #[test]
    fn kind_restricts_to_one_family() {
        let opts = EngineOptions {
            kind: Some(EngineKind::Podman),
            ..Default::default()
        };
        let list = candidates(&opts, &env()).unwrap();
        assert!(list
            .iter()
            .all(|c| c.family_hint == Some(EngineKind::Podman)));
        assert_eq!(list.len(), 2);
    }

    #[test]
    fn explicit_socket_is_the_only_candidate() {
        let opts = EngineOptions {
            socket_path: Some("/nope/docker.sock".into()),
            ..Default::default()
        };
        let list = candidates(&opts, &env()).unwrap();
        assert_eq!(shown(&list), ["unix:///nope/docker.sock"]);
    }

    #[test]
    fn unsupported_scheme_is_invalid() {
        let opts = EngineOptions {
            host: Some("ssh://me@box".into()),
            ..Default::default()
        };
        let err = candidates(&opts, &env()).unwrap_err();
        assert_eq!(err.code, crate::error::ErrorCode::InvalidArgument);
    }
}
