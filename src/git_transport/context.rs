//! The state of the transfer in effect on a thread: what the registered transports read
//! when libgit2 creates them, and where they leave the error libgit2 cannot carry.

use super::credentials::Credentials;
use super::remote_url::RemoteUrl;
use super::transfer::Transfer;
use crate::error::{Error, ErrorCode, Result};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub(super) struct TransferContext {
    pub url: RemoteUrl,
    pub credentials: Option<Credentials>,
    pub ca_certificate: Option<String>,
    pub timeout: Duration,
    pub deadline: Instant,
    max_received_bytes: u64,
    received: AtomicU64,
    failure: Mutex<Option<Error>>,
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<TransferContext>>> = const { RefCell::new(None) };
}

/// The transfer in effect on this thread, if any.
pub(super) fn current() -> Option<Arc<TransferContext>> {
    CURRENT.with(|current| current.borrow().clone())
}

/// Puts `context` in effect on this thread until the guard drops (then the one before it).
pub(super) fn install(context: Arc<TransferContext>) -> Installed {
    let previous = CURRENT.with(|current| current.replace(Some(context)));
    Installed { previous }
}

pub(super) struct Installed {
    previous: Option<Arc<TransferContext>>,
}

impl Drop for Installed {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|current| *current.borrow_mut() = previous);
    }
}

impl TransferContext {
    pub fn new(transfer: &Transfer) -> Arc<TransferContext> {
        let now = Instant::now();
        Arc::new(TransferContext {
            url: transfer.url.clone(),
            credentials: transfer.credentials.clone(),
            ca_certificate: transfer.ca_certificate.clone(),
            timeout: transfer.timeout,
            deadline: now
                .checked_add(transfer.timeout)
                .unwrap_or(now + Duration::from_secs(86400 * 365)),
            max_received_bytes: transfer.max_received_bytes,
            received: AtomicU64::new(0),
            failure: Mutex::new(None),
        })
    }

    /// Keeps the first failure of the transfer (the cause; later ones are consequences)
    /// and returns it, for the transport to hand libgit2 as its error.
    pub fn fail(&self, error: Error) -> Error {
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        failure.get_or_insert(error).clone()
    }

    pub fn take_failure(&self) -> Option<Error> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    pub fn received_bytes(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }

    /// Counts `n` bytes read from the remote; LIMIT_EXCEEDED past the transfer's bound.
    pub fn count_received(&self, n: usize) -> Result<()> {
        let total = self.received.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        if total > self.max_received_bytes {
            return Err(Error::new(
                ErrorCode::LimitExceeded,
                format!(
                    "{}: the remote sent more than {} bytes",
                    self.url, self.max_received_bytes
                ),
            ));
        }
        Ok(())
    }

    pub fn timeout_error(&self, what: &str) -> Error {
        Error::timeout(format!(
            "{}: {what} did not finish within {:?}",
            self.url, self.timeout
        ))
    }

    /// INVALID_ARGUMENT unless libgit2 connects to the transfer's own URL (a remote's
    /// `insteadOf` rewrite or another remote must not receive these credentials).
    pub fn check_url(&self, url: &str) -> Result<()> {
        if url == self.url.as_str() {
            return Ok(());
        }
        Err(Error::invalid_argument(format!(
            "libgit2 was about to connect to another URL than {}, the transfer's (a remote's \
             url or insteadOf rewrite): refused",
            self.url
        )))
    }
}

/// How a transport hands libgit2 an error it has recorded.
pub(super) fn to_git2(error: &Error) -> git2::Error {
    git2::Error::new(
        git2::ErrorCode::GenericError,
        git2::ErrorClass::Net,
        error.message.clone(),
    )
}

pub(super) fn to_io(error: &Error) -> std::io::Error {
    std::io::Error::other(error.message.clone())
}
