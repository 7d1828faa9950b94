//! Running libgit2 network calls with one transfer in effect, and turning what fails into
//! this crate's errors.

use super::context::{self, TransferContext};
use super::registration::ensure_registered;
use super::transfer::Transfer;
use crate::error::{Error, Result};
use std::time::Instant;

/// Runs `f` (which calls libgit2: `Remote::push`, `Remote::fetch`, `RepoBuilder` ... with the
/// url it is given, best on an anonymous remote) with this transfer's transports in effect
/// on this thread. Call it on a blocking thread, never on a tokio worker.
///
/// The transports serve only this transfer's URL: a remote whose URL or `insteadOf` rewrite
/// points elsewhere is refused (INVALID_ARGUMENT), so credentials go nowhere else. A libgit2
/// network call on a thread with no transfer in effect fails.
///
/// Errors: GIT_AUTH (401/403 with credentials or 401 without; ssh "Permission denied"),
/// TIMEOUT, LIMIT_EXCEEDED, INVALID_ARGUMENT, otherwise GIT naming the URL and what failed.
pub fn with_transfer<T>(
    transfer: &Transfer,
    f: impl FnOnce(&str) -> Result<T, git2::Error>,
) -> Result<T> {
    transfer.check()?;
    ensure_registered()?;
    let context = TransferContext::new(transfer);
    let started = Instant::now();
    let result = {
        let _installed = context::install(context.clone());
        f(transfer.url.as_str())
    };
    let received = context.received_bytes();
    let failure = context.take_failure();
    tracing::debug!(
        url = %transfer.url,
        ok = result.is_ok(),
        received,
        elapsed_ms = started.elapsed().as_millis() as u64,
        "git transfer finished"
    );
    result.map_err(|error| {
        failure.unwrap_or_else(|| Error::git(&format!("git transfer with {}", transfer.url), error))
    })
}
