//! The process-wide registration of this module's transports with libgit2, done once and
//! before any transfer; each factory serves only the transfer in effect on its thread.

use super::context;
use super::http_subtransport::HttpSubtransport;
use super::ssh_subtransport::SshSubtransport;
use crate::error::{Error, ErrorCode, Result};
use git2::transport::Transport;
use git2::Remote;
use std::sync::OnceLock;

/// libgit2 hands a scp-like `host:path` to whatever serves ssh://.
const HTTP_SCHEMES: [&str; 2] = ["http", "https"];
const SSH_SCHEMES: [&str; 3] = ["ssh", "git+ssh", "ssh+git"];
/// Served by libgit2 itself unless replaced; refused here so nothing speaks it.
const REFUSED_SCHEMES: [&str; 1] = ["git"];

/// Registers the transports (once per process). Call it early, before other threads use
/// libgit2: libgit2's registry of transports has no lock of its own.
pub fn ensure_registered() -> Result<()> {
    static REGISTERED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(register_all)
        .clone()
        .map_err(|message| Error::new(ErrorCode::Git, message))
}

fn register_all() -> std::result::Result<(), String> {
    let register = |scheme: &'static str,
                    factory: fn(&Remote<'_>) -> Result<Transport, git2::Error>| {
        // SAFETY: called once per scheme, inside a OnceLock initializer, so no two
        // registrations race; see ensure_registered for transports created meanwhile.
        unsafe { git2::transport::register(scheme, factory) }
            .map_err(|e| format!("registering the {scheme}:// transport: {}", e.message()))
    };
    for scheme in HTTP_SCHEMES {
        register(scheme, http_transport)?;
    }
    for scheme in SSH_SCHEMES {
        register(scheme, ssh_transport)?;
    }
    for scheme in REFUSED_SCHEMES {
        register(scheme, refused_transport)?;
    }
    Ok(())
}

fn no_transfer() -> git2::Error {
    factory_error(
        "no git transfer is in effect on this thread: network use goes through \
         git_transport::with_transfer",
    )
}

/// git2 returns a factory's error code to libgit2 without its message, so the message is
/// set in libgit2's error state here, else libgit2 reports a stale one.
fn factory_error(message: &str) -> git2::Error {
    if let Ok(text) = std::ffi::CString::new(message) {
        // SAFETY: a valid NUL-terminated string; libgit2 copies it into its thread state.
        unsafe { libgit2_sys::git_error_set_str(libgit2_sys::GIT_ERROR_NET as _, text.as_ptr()) };
    }
    git2::Error::new(
        git2::ErrorCode::GenericError,
        git2::ErrorClass::Net,
        message,
    )
}

fn http_transport(remote: &Remote<'_>) -> Result<Transport, git2::Error> {
    let context = context::current().ok_or_else(no_transfer)?;
    let subtransport = HttpSubtransport::new(context.clone())
        .map_err(|error| factory_error(&context.fail(error).message))?;
    Transport::smart(remote, true, subtransport)
}

fn ssh_transport(remote: &Remote<'_>) -> Result<Transport, git2::Error> {
    let context = context::current().ok_or_else(no_transfer)?;
    Transport::smart(remote, false, SshSubtransport::new(context))
}

fn refused_transport(_remote: &Remote<'_>) -> Result<Transport, git2::Error> {
    Err(factory_error(
        "the git:// protocol is not supported (unauthenticated and unencrypted)",
    ))
}
