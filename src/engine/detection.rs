//! Which endpoints to try, in order: an explicit socket, host or context alone; else
//! `DOCKER_HOST` (or the docker context `DOCKER_CONTEXT` or the config's `currentContext`
//! names), `CONTAINER_HOST`, then the well-known sockets.

use std::path::PathBuf;

use super::detection_env::DetectionEnv;
use super::docker_context::{
    current_context, default_tls, docker_host_endpoint, load_context, DEFAULT_CONTEXT,
};
use super::endpoint::Endpoint;
use super::options::{EngineKind, EngineOptions, SshOptions, TlsOptions};
use crate::error::{Error, Result};

/// An endpoint to probe, with where it came from and the family its location suggests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub endpoint: Endpoint,
    pub source: &'static str,
    pub family_hint: Option<EngineKind>,
    /// Named by the caller (an option), so its failure is reported with its own code.
    pub explicit: bool,
}

fn explicit(endpoint: Endpoint, source: &'static str) -> Vec<Candidate> {
    vec![Candidate {
        endpoint,
        source,
        family_hint: None,
        explicit: true,
    }]
}

/// The endpoints to try, in order. An explicit `socketPath`, `host` or `context` is the
/// only candidate.
pub fn candidates(opts: &EngineOptions, env: &DetectionEnv) -> Result<Vec<Candidate>> {
    let named_context = opts.context.as_deref().filter(|c| *c != DEFAULT_CONTEXT);
    if opts.context.is_some() && (opts.host.is_some() || opts.socket_path.is_some()) {
        return Err(Error::invalid_argument(
            "engine options: give host (or socketPath) or context, not both",
        ));
    }
    if opts.tls.is_some() && opts.host.is_none() {
        return Err(Error::invalid_argument(
            "engine option tls applies to a tcp:// host; give host too",
        ));
    }
    let list = if let Some(path) = &opts.socket_path {
        let endpoint = Endpoint::parse_host(path)
            .ok()
            .filter(Endpoint::is_unix)
            .unwrap_or_else(|| Endpoint::Unix(PathBuf::from(path)));
        explicit(endpoint, "socketPath option")
    } else if let Some(host) = &opts.host {
        let mut endpoint = Endpoint::parse_host(host)?;
        if let Some(tls) = &opts.tls {
            endpoint = endpoint.with_tls(with_defaults(tls, env))?;
        }
        explicit(endpoint, "host option")
    } else if let Some(name) = named_context {
        explicit(load_context(env, name)?, "context option")
    } else {
        let mut list = detected(env, opts.context.is_none())?;
        if let Some(kind) = opts.kind {
            list.retain(|c| c.family_hint.is_none_or(|hint| hint == kind));
        }
        list
    };
    Ok(list
        .into_iter()
        .map(|c| Candidate {
            endpoint: with_ssh(c.endpoint, &opts.ssh),
            ..c
        })
        .collect())
}

/// The caller's TLS files, each one not given taken from the default folder where it is
/// there (as the docker CLI fills in `--tlscacert`, `--tlscert` and `--tlskey`).
fn with_defaults(tls: &TlsOptions, env: &DetectionEnv) -> TlsOptions {
    let defaults = default_tls(env);
    let pair_given = tls.cert.is_some() || tls.key.is_some();
    let default_pair = defaults.cert.is_some() && defaults.key.is_some();
    TlsOptions {
        ca: tls.ca.clone().or(defaults.ca),
        cert: if pair_given || !default_pair {
            tls.cert.clone()
        } else {
            defaults.cert
        },
        key: if pair_given || !default_pair {
            tls.key.clone()
        } else {
            defaults.key
        },
        insecure_skip_verify: tls.insecure_skip_verify,
    }
}

fn with_ssh(endpoint: Endpoint, ssh: &SshOptions) -> Endpoint {
    match endpoint {
        Endpoint::Ssh(mut target) => {
            target.options = ssh.clone();
            Endpoint::Ssh(target)
        }
        other => other,
    }
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

/// Auto-detection's candidates: `DOCKER_HOST` (else the docker context selected by
/// `DOCKER_CONTEXT` or the config's `currentContext`, when `contexts`), `CONTAINER_HOST`,
/// then the well-known sockets, each endpoint once. An unusable `DOCKER_HOST` is left
/// out; a selected context that does not exist is `INVALID_ARGUMENT`, as with docker.
fn detected(env: &DetectionEnv, contexts: bool) -> Result<Vec<Candidate>> {
    let mut list: Vec<Candidate> = Vec::new();
    let mut push = |endpoint: Endpoint, source: &'static str, hint: Option<EngineKind>| {
        if !list.iter().any(|c| c.endpoint == endpoint) {
            list.push(Candidate {
                endpoint,
                source,
                family_hint: hint,
                explicit: false,
            });
        }
    };
    if let Some(found) = docker_host_endpoint(env) {
        if let Ok(endpoint) = found {
            push(endpoint, "DOCKER_HOST", None);
        }
    } else if contexts {
        let selected = match &env.docker_context {
            Some(name) => Some((name.clone(), "DOCKER_CONTEXT")),
            None => current_context(env).map(|name| (name, "docker config currentContext")),
        };
        if let Some((name, source)) = selected.filter(|(n, _)| n != DEFAULT_CONTEXT) {
            push(load_context(env, &name)?, source, None);
        }
    }
    if let Some(endpoint) = env
        .container_host
        .as_deref()
        .and_then(|h| Endpoint::parse_host(h).ok())
    {
        push(endpoint, "CONTAINER_HOST", None);
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
    Ok(list)
}

#[cfg(test)]
#[path = "detection_tests.rs"]
mod tests;
