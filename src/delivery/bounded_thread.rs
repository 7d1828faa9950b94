//! A read of a hostile clone on a thread of its own, answered within its time bound (plus
//! a second of grace): a read stuck in the file system (a FIFO where a file was expected)
//! is left behind with `TIMEOUT`, the caller is not.

use std::sync::mpsc;
use std::time::Duration;

use crate::error::{Error, ErrorCode, Result};

pub fn run_bounded<T: Send + 'static>(
    what: &str,
    timeout: Duration,
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(format!("ci-{what}"))
        .spawn(move || {
            let _ = tx.send(work());
        })
        .map_err(|e| Error::new(ErrorCode::EngineError, format!("{what}: no thread: {e}")))?;
    match rx.recv_timeout(timeout + Duration::from_secs(1)) {
        Ok(result) => result,
        Err(_) => Err(Error::timeout(format!(
            "{what}: took longer than {} ms",
            timeout.as_millis()
        ))),
    }
}
