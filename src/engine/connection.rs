//! A connected engine: its client, what it is, where it is, and its calls bounded by the
//! request timeout with their errors mapped (reached through `engine_connect`).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bollard::Docker;

use super::endpoint::Endpoint;
use super::engine_error::from_bollard;
use super::info::EngineInfo;
use super::ssh_tunnel::SshTunnel;
use crate::error::{Error, ErrorCode, Result};

/// A live connection to one engine. Cheap to clone: the HTTP client is shared.
#[derive(Clone)]
pub struct Engine {
    docker: Docker,
    info: Arc<EngineInfo>,
    /// Shared: an endpoint with its TLS files or ssh target is large, and engines are
    /// cloned into many places.
    endpoint: Arc<Endpoint>,
    timeout: Duration,
    /// For `ssh://`: the bridge bollard talks through, alive while any clone is.
    tunnel: Option<Arc<SshTunnel>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("endpoint", &self.endpoint.to_string())
            .field("kind", &self.info.kind)
            .finish()
    }
}

impl Engine {
    pub(super) fn new(
        docker: Docker,
        info: EngineInfo,
        endpoint: Endpoint,
        timeout: Duration,
        tunnel: Option<Arc<SshTunnel>>,
    ) -> Engine {
        Engine {
            docker,
            info: Arc::new(info),
            endpoint: Arc::new(endpoint),
            timeout,
            tunnel,
        }
    }

    pub fn docker(&self) -> &Docker {
        &self.docker
    }

    pub fn info(&self) -> &EngineInfo {
        &self.info
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The local socket of an `ssh://` engine's bridge (it reaches that engine too).
    pub fn tunnel_socket(&self) -> Option<&std::path::Path> {
        self.tunnel.as_deref().map(SshTunnel::socket)
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether the engine runs on this machine's kernel and file system, so that host pids
    /// it reports can be acted on and its mount points read from here. Probed once at
    /// connect (see `local_probe`), never assumed from the address.
    pub fn is_local(&self) -> bool {
        self.info.local
    }

    /// Runs one request-response call under the per-request timeout, mapping its error.
    pub async fn call<T, F>(&self, subject: &str, fut: F) -> Result<T>
    where
        F: Future<Output = Result<T, bollard::errors::Error>>,
    {
        match tokio::time::timeout(self.timeout, fut).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => Err(self.annotate(from_bollard(err, subject))),
            Err(_) => Err(Error::timeout(format!(
                "{subject}: the engine at {} did not answer within {} ms",
                self.endpoint,
                self.timeout.as_millis()
            ))),
        }
    }

    /// Adds the endpoint to errors that are about reaching the engine.
    pub fn annotate(&self, mut err: Error) -> Error {
        if err.code == ErrorCode::EngineUnavailable {
            err.message = format!("{} (engine {})", err.message, self.endpoint);
            if let Some(said) = self.tunnel.as_deref().map(SshTunnel::last_stderr) {
                if !said.is_empty() {
                    err.message = format!("{}; ssh said: {said}", err.message);
                }
            }
        }
        err
    }
}
