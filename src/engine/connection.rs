//! A connected engine: detection by probing candidates, and one shared connection per
//! endpoint per process.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bollard::Docker;

use super::detection::{candidates, DetectionEnv};
use super::endpoint::Endpoint;
use super::engine_error::from_bollard;
use super::info::EngineInfo;
use super::options::EngineOptions;
use super::probe::probe;
use super::ssh_tunnel::SshTunnel;
use crate::error::{Error, ErrorCode, Result};

/// A live connection to one engine. Cheap to clone: the HTTP client is shared.
#[derive(Clone)]
pub struct Engine {
    docker: Docker,
    info: Arc<EngineInfo>,
    endpoint: Endpoint,
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
            endpoint,
            timeout,
            tunnel,
        }
    }

    /// The pooled engine for these options, detected on first use. A failed detection is
    /// not remembered, so a call after the engine comes back succeeds.
    pub async fn connect(opts: &EngineOptions) -> Result<Engine> {
        let cell = {
            let mut pool = pool().lock().unwrap_or_else(|e| e.into_inner());
            pool.entry(opts.clone()).or_default().clone()
        };
        cell.get_or_try_init(|| detect(opts)).await.cloned()
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

type Pool = Mutex<HashMap<EngineOptions, Arc<tokio::sync::OnceCell<Engine>>>>;

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Default::default)
}

/// Probes every candidate in order; the first that answers (and is of the asked kind) wins.
/// An explicit candidate's refusal of its TLS or its files keeps its own code.
pub async fn detect(opts: &EngineOptions) -> Result<Engine> {
    let list = candidates(opts, &DetectionEnv::from_process())?;
    let mut failures = Vec::new();
    for candidate in &list {
        match probe(candidate, opts).await {
            Ok(engine) => return Ok(engine),
            Err(err) if candidate.explicit && err.code != ErrorCode::EngineUnavailable => {
                return Err(err)
            }
            Err(err) => failures.push(format!(
                "{} (from {}): {}",
                candidate.endpoint, candidate.source, err.message
            )),
        }
    }
    let wanted = opts
        .kind
        .map(|k| format!("{} ", k.as_str()))
        .unwrap_or_default();
    Err(Error::new(
        ErrorCode::EngineUnavailable,
        format!(
            "no {wanted}engine answered; tried {}",
            if failures.is_empty() {
                "nothing".to_string()
            } else {
                failures.join("; ")
            }
        ),
    ))
}
