//! `detectEngine` and the `EngineOptions`/`EngineInfo` objects (docs/contract.md §1).

use std::time::Duration;

use napi::Either;
use napi_derive::napi;

use super::error::Outcome;
use super::kubernetes_runtime::KubernetesOptions;
use crate::engine::{self, EngineKind};
use crate::error::{Error, ErrorCode, Result};

/// TLS to a `tcp://` host. Each file is a PEM file path, as the docker CLI's `--tlscacert`,
/// `--tlscert`, `--tlskey`; one not given is taken from `DOCKER_CERT_PATH` (else the docker
/// config folder) where it exists there.
#[napi(object)]
#[derive(Clone, Default)]
pub struct EngineTlsOptions {
    /// The CAs the server's certificate must chain to (else the system's).
    pub ca: Option<String>,
    /// The client certificate.
    pub cert: Option<String>,
    /// The client certificate's key.
    pub key: Option<String>,
    /// Take any server certificate, unverified. Only when you mean it.
    pub insecure_skip_verify: Option<bool>,
}

/// What the system `ssh` client gets for an `ssh://` host (on top of `~/.ssh/config`).
#[napi(object)]
#[derive(Clone, Default)]
pub struct EngineSshOptions {
    /// Private key file: `ssh -i <keyFile> -o IdentitiesOnly=yes`.
    pub key_file: Option<String>,
    /// `ssh -o UserKnownHostsFile=<knownHostsFile>`.
    pub known_hosts_file: Option<String>,
}

/// Which container engine to talk to. Every field optional: without any, the first engine
/// that answers is used (`DOCKER_HOST`, else the docker context `DOCKER_CONTEXT` or the
/// docker config's `currentContext` names, `CONTAINER_HOST`, the usual Docker and Podman
/// sockets).
#[napi(object)]
#[derive(Clone, Default)]
pub struct EngineOptions {
    /// Unix socket path, e.g. /var/run/docker.sock.
    pub socket_path: Option<String>,
    /// DOCKER_HOST-style URL: unix://, tcp://host:port, http://, ssh://[user@]host[:port].
    pub host: Option<String>,
    /// TLS for a `tcp://` host: `true` with the default files, or the files to use.
    #[napi(ts_type = "boolean | EngineTlsOptions")]
    pub tls: Option<Either<bool, EngineTlsOptions>>,
    /// A docker context's name (`default`: no context); not with `host` or `socketPath`.
    pub context: Option<String>,
    /// For `ssh://` hosts.
    pub ssh: Option<EngineSshOptions>,
    /// Restrict auto-detection to one family.
    #[napi(ts_type = "'docker' | 'podman'")]
    pub kind: Option<String>,
    /// Per request, in milliseconds; default 120000.
    pub timeout_ms: Option<f64>,
    /// Sessions on a Kubernetes cluster instead of an engine (`Workspaces` only, and no other
    /// field beside it; docs/kubernetes.md).
    pub kubernetes: Option<KubernetesOptions>,
}

/// What `detectEngine` found.
#[napi(object)]
pub struct EngineInfo {
    /// `apple-container` only on macOS, when no Engine API answers but Apple's `container`
    /// CLI does (use `AppleContainerRuntime` then).
    #[napi(ts_type = "'docker' | 'podman' | 'apple-container'")]
    pub kind: String,
    /// The URL answered, e.g. `unix:///var/run/docker.sock`.
    pub endpoint: String,
    /// The engine's version.
    pub version: String,
    /// The Engine API version spoken.
    pub api_version: String,
    /// The engine's OS, e.g. `linux`.
    pub os: String,
    /// The engine's architecture as it reports it, e.g. `amd64`.
    pub arch: String,
    /// Whether the engine shares this machine's kernel and file system (found by making a
    /// volume and looking for its folder here, never assumed from the address).
    pub local: bool,
    /// Which session agent this process has for containers of the engine's own architecture
    /// (`x64 (sha256 …)`), or why it has none (`none: …`); a container of another architecture
    /// gets the agent for its own (`containerAccess` says which path it takes).
    pub agent: String,
}

pub fn engine_options(opts: Option<EngineOptions>) -> Result<engine::EngineOptions> {
    let opts = opts.unwrap_or_default();
    if opts.kubernetes.is_some() {
        return Err(Error::new(
            ErrorCode::Unsupported,
            "engine.kubernetes is taken by Workspaces and reapOrphans only (containers on a cluster: KubernetesRuntime)",
        ));
    }
    let kind = match opts.kind.as_deref() {
        None => None,
        Some("docker") => Some(EngineKind::Docker),
        Some("podman") => Some(EngineKind::Podman),
        Some(other) => {
            return Err(Error::invalid_argument(format!(
                "engine kind '{other}' is not 'docker' or 'podman'"
            )))
        }
    };
    let timeout = match opts.timeout_ms {
        None => engine::DEFAULT_TIMEOUT,
        Some(ms) if ms.is_finite() && ms > 0.0 => Duration::from_millis(ms.ceil() as u64),
        Some(ms) => {
            return Err(Error::invalid_argument(format!(
                "engine timeoutMs {ms} must be a positive number"
            )))
        }
    };
    let path = |p: Option<String>| p.filter(|s| !s.is_empty()).map(std::path::PathBuf::from);
    let tls = match opts.tls {
        None | Some(Either::A(false)) => None,
        Some(Either::A(true)) => Some(engine::TlsOptions::default()),
        Some(Either::B(tls)) => Some(engine::TlsOptions {
            ca: path(tls.ca),
            cert: path(tls.cert),
            key: path(tls.key),
            insecure_skip_verify: tls.insecure_skip_verify.unwrap_or(false),
        }),
    };
    let ssh = opts.ssh.unwrap_or_default();
    Ok(engine::EngineOptions {
        socket_path: opts.socket_path.filter(|s| !s.is_empty()),
        host: opts.host.filter(|s| !s.is_empty()),
        tls,
        context: opts.context.filter(|s| !s.is_empty()),
        ssh: engine::SshOptions {
            key_file: path(ssh.key_file),
            known_hosts_file: path(ssh.known_hosts_file),
        },
        kind,
        timeout,
    })
}

impl From<&engine::EngineInfo> for EngineInfo {
    fn from(info: &engine::EngineInfo) -> Self {
        EngineInfo {
            kind: info.kind.as_str().to_string(),
            endpoint: info.endpoint.clone(),
            version: info.version.clone(),
            api_version: info.api_version.clone(),
            os: info.os.clone(),
            arch: info.arch.clone(),
            local: info.local,
            agent: agent_source(&info.arch),
        }
    }
}

fn agent_source(arch: &str) -> String {
    match crate::agent::agent_binary(arch) {
        Ok(binary) => format!("{} (sha256 {})", binary.arch.npm(), binary.tag()),
        Err(why) => format!("none: {why}"),
    }
}

/// How a container's commands and file operations are carried out (`containerAccess`).
#[napi(object)]
pub struct ContainerAccess {
    /// `agent`: commands and file operations go through the session agent; `engine`: through
    /// engine execs and archive calls.
    #[napi(ts_type = "'agent' | 'engine'")]
    pub path: String,
    /// How requests reach the agent: `direct` over a unix socket this process listens on in
    /// the container's line folder (no engine in the path), `exec` over the agent's engine
    /// exec stream; `engine` when there is no agent (as `path`).
    #[napi(ts_type = "'direct' | 'exec' | 'engine'")]
    pub line: String,
    /// The agent's path and pid inside the container.
    pub agent_path: Option<String>,
    /// The agent's pid inside the container.
    pub agent_pid: Option<u32>,
    /// Why requests do not take a faster way: with `line: 'engine'`, why the agent does not
    /// run there; with `line: 'exec'`, why not the direct line.
    pub reason: Option<String>,
    /// How the frames of the container's egress relay (run by this process) travel:
    /// `direct` over the direct line, `exec` over the relay's own exec stream; absent when
    /// this process runs no relay for the container.
    #[napi(ts_type = "'direct' | 'exec'")]
    pub relay_line: Option<String>,
    /// With `relayLine: 'exec'`, why not the direct line.
    pub relay_reason: Option<String>,
}

impl ContainerAccess {
    /// With how the container's relay (if this process runs one) reaches it.
    pub fn with_relay(mut self, relay: Option<crate::agent::Line>) -> Self {
        (self.relay_line, self.relay_reason) = match relay {
            None => (None, None),
            Some(crate::agent::Line::Direct) => (Some("direct".into()), None),
            Some(crate::agent::Line::Exec(why)) => (Some("exec".into()), Some(why)),
        };
        self
    }
}

impl From<crate::agent::AgentAccess> for ContainerAccess {
    fn from(access: crate::agent::AgentAccess) -> Self {
        match access {
            crate::agent::AgentAccess::Agent {
                path,
                pid,
                exec_why,
            } => ContainerAccess {
                path: "agent".into(),
                line: match exec_why {
                    None => "direct".into(),
                    Some(_) => "exec".into(),
                },
                agent_path: Some(path),
                agent_pid: Some(pid),
                reason: exec_why,
                relay_line: None,
                relay_reason: None,
            },
            crate::agent::AgentAccess::Engine { why } => ContainerAccess {
                path: "engine".into(),
                line: "engine".into(),
                agent_path: None,
                agent_pid: None,
                reason: Some(why),
                relay_line: None,
                relay_reason: None,
            },
        }
    }
}

/// Which path `containerId`'s commands and file operations take (starting its session agent
/// if it can run and has not yet), and over which line.
#[napi(ts_return_type = "Promise<ContainerAccess>")]
pub async fn container_access(
    container_id: String,
    opts: Option<EngineOptions>,
) -> Outcome<ContainerAccess> {
    async {
        let engine = engine::Engine::connect(&engine_options(opts)?).await?;
        let access = crate::agent::agent_access(&engine, &container_id).await?;
        let relay = crate::egress::relay_line(&engine, &container_id).await;
        Ok(ContainerAccess::from(access).with_relay(relay))
    }
    .await
    .into()
}

/// Probes the engine these options point at (or auto-detects one), now, and reports what
/// it is.
#[napi(ts_return_type = "Promise<EngineInfo>")]
pub async fn detect_engine(opts: Option<EngineOptions>) -> Outcome<EngineInfo> {
    async {
        let options = engine_options(opts)?;
        match engine::detect(&options).await {
            Ok(engine) => Ok(EngineInfo::from(engine.info())),
            Err(err) => apple_container_instead(&options).await.ok_or(err),
        }
    }
    .await
    .into()
}

/// Apple's `container` CLI as the engine, when it stands in for one (see `apple_cli_version`).
async fn apple_container_instead(options: &engine::EngineOptions) -> Option<EngineInfo> {
    let version = crate::apple::apple_cli_version(options).await?;
    Some(EngineInfo {
        kind: "apple-container".into(),
        endpoint: "container CLI".into(),
        version,
        api_version: String::new(),
        os: "linux".into(),
        arch: std::env::consts::ARCH.into(),
        local: true,
        agent: "none: containers of Apple's CLI use its exec".into(),
    })
}
