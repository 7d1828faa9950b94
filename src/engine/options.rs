//! How a caller says which engine to use, how to reach it (TLS, ssh, a docker context),
//! and how long a request may take.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(120_000);

/// The engine families this library speaks to through the Docker Engine API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineKind {
    Docker,
    Podman,
}

impl EngineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Docker => "docker",
            EngineKind::Podman => "podman",
        }
    }
}

/// TLS to a `tcp://` host. `Default` means TLS with the default files (`DOCKER_CERT_PATH`,
/// else the docker config folder), each used only where it exists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TlsOptions {
    /// PEM file of the CAs the server's certificate must chain to.
    pub ca: Option<PathBuf>,
    /// PEM file of the client certificate.
    pub cert: Option<PathBuf>,
    /// PEM file of the client certificate's key.
    pub key: Option<PathBuf>,
    /// No verification of the server at all; only when the caller says so in words.
    pub insecure_skip_verify: bool,
}

/// What the system `ssh` client is given for `ssh://` hosts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SshOptions {
    pub key_file: Option<PathBuf>,
    pub known_hosts_file: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EngineOptions {
    pub socket_path: Option<String>,
    pub host: Option<String>,
    /// `None`: plain HTTP for `tcp://`; `Some`: TLS as described.
    pub tls: Option<TlsOptions>,
    /// A docker context's name (`default`: none).
    pub context: Option<String>,
    pub ssh: SshOptions,
    pub kind: Option<EngineKind>,
    pub timeout: Duration,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            socket_path: None,
            host: None,
            tls: None,
            context: None,
            ssh: SshOptions::default(),
            kind: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}
