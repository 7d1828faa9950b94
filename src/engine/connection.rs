//! A connected engine: detection by probing candidates, and one shared connection per
//! endpoint per process.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bollard::{Docker, API_DEFAULT_VERSION};

use super::endpoint::{candidates, Candidate, DetectionEnv, Endpoint};
use super::engine_error::{describe, from_bollard};
use super::info::{kind_from_version, EngineInfo};
use super::options::EngineOptions;
use crate::error::{Error, ErrorCode, Result};

/// How long one candidate may take to answer a ping during auto-detection.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// A live connection to one engine. Cheap to clone: the HTTP client is shared.
#[derive(Clone)]
pub struct Engine {
    docker: Docker,
    info: Arc<EngineInfo>,
    endpoint: Endpoint,
    timeout: Duration,
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

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether the engine runs on this machine's kernel (a unix socket), so that host pids
    /// it reports can be acted on from here.
    pub fn is_local(&self) -> bool {
        self.endpoint.is_unix() && cfg!(target_os = "linux")
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
pub async fn detect(opts: &EngineOptions) -> Result<Engine> {
    let list = candidates(opts, &DetectionEnv::from_process())?;
    let mut failures = Vec::new();
    for candidate in &list {
        match probe(candidate, opts).await {
            Ok(engine) => return Ok(engine),
            Err(reason) => failures.push(format!(
                "{} (from {}): {reason}",
                candidate.endpoint, candidate.source
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

async fn probe(candidate: &Candidate, opts: &EngineOptions) -> std::result::Result<Engine, String> {
    let seconds = opts.timeout.as_secs().max(1);
    let docker = match &candidate.endpoint {
        Endpoint::Unix(path) => {
            if !path.exists() {
                return Err("no such socket file".into());
            }
            Docker::connect_with_unix(&path.to_string_lossy(), seconds, API_DEFAULT_VERSION)
        }
        Endpoint::Http(url) => Docker::connect_with_http(url, seconds, API_DEFAULT_VERSION),
    }
    .map_err(|e| describe(&e))?;

    let probe_timeout = PROBE_TIMEOUT.min(opts.timeout);
    let answered = tokio::time::timeout(probe_timeout, async {
        docker.ping().await?;
        docker.version().await
    })
    .await;
    let version = match answered {
        Ok(Ok(version)) => version,
        Ok(Err(err)) => return Err(describe(&err)),
        Err(_) => return Err(format!("no answer within {} ms", probe_timeout.as_millis())),
    };
    let kind = kind_from_version(&version);
    if let Some(wanted) = opts.kind {
        if wanted != kind {
            return Err(format!(
                "answers as {}, but kind '{}' was asked for",
                kind.as_str(),
                wanted.as_str()
            ));
        }
    }
    let info = EngineInfo {
        kind,
        endpoint: candidate.endpoint.to_string(),
        version: version.version.unwrap_or_default(),
        api_version: version.api_version.unwrap_or_default(),
        os: version.os.unwrap_or_default(),
        arch: version.arch.unwrap_or_default(),
    };
    Ok(Engine {
        docker,
        info: Arc::new(info),
        endpoint: candidate.endpoint.clone(),
        timeout: opts.timeout,
    })
}
