//! Reaching an engine: every candidate probed in order (`detection`, `probe`), the first that
//! answers kept per set of options for the process.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::connection::Engine;
use super::detection::candidates;
use super::detection_env::DetectionEnv;
use super::options::EngineOptions;
use super::probe::probe;
use crate::error::{Error, ErrorCode, Result};

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
