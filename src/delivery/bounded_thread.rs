//! A read of a hostile clone on a thread of its own, answered within its time bound (plus
//! a second of grace): a read stuck in the file system (a FIFO where a file was expected)
//! is left behind with `TIMEOUT`, the caller is not. What the work writes outside the
//! host's scratch space — into the project, or to a remote — goes through its
//! `Commitment`: it starts only while the caller still waits and the deadline has not
//! passed, and once it has started the caller waits for it to end. So `TIMEOUT` means
//! nothing was written, ever.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::limits::Deadline;
use crate::error::{Error, ErrorCode, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Working,
    Writing,
    Abandoned,
}

/// The one gate between a bounded piece of work and its writes.
#[derive(Clone)]
pub struct Commitment(Arc<Mutex<Stage>>);

impl Commitment {
    fn stage(&self) -> std::sync::MutexGuard<'_, Stage> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `write` unless the caller has given up or `deadline` has passed (`TIMEOUT`,
    /// nothing written); from then on the caller waits for it.
    pub fn write<T>(
        &self,
        deadline: &Deadline,
        what: &str,
        write: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        {
            let mut stage = self.stage();
            if *stage == Stage::Abandoned || deadline.passed() {
                return Err(deadline.error(what));
            }
            *stage = Stage::Writing;
        }
        write()
    }

    /// The caller gives up, unless the writing has begun (`false`: wait for it).
    fn abandon(&self) -> bool {
        let mut stage = self.stage();
        if *stage == Stage::Writing {
            return false;
        }
        *stage = Stage::Abandoned;
        true
    }
}

pub fn run_bounded<T: Send + 'static>(
    what: &str,
    timeout: Duration,
    work: impl FnOnce(&Commitment) -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = mpsc::channel();
    let commitment = Commitment(Arc::new(Mutex::new(Stage::Working)));
    let worker = commitment.clone();
    std::thread::Builder::new()
        .name(format!("ci-{what}"))
        .spawn(move || {
            let _ = tx.send(work(&worker));
        })
        .map_err(|e| Error::new(ErrorCode::EngineError, format!("{what}: no thread: {e}")))?;
    let gave_up = || {
        Error::timeout(format!(
            "{what}: took longer than {} ms; nothing was written",
            timeout.as_millis()
        ))
    };
    match rx.recv_timeout(timeout + Duration::from_secs(1)) {
        Ok(result) => result,
        Err(_) if commitment.abandon() => Err(gave_up()),
        Err(_) => rx.recv().unwrap_or_else(|_| Err(gave_up())),
    }
}
