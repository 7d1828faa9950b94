//! A git remote as the host names it (`Workspaces.push`, `create({ repository })`): its URL,
//! credentials, extra CA and time bound, converted into a `git_transport::Transfer`.
//! Credentials are taken from the call only and never kept.

use napi_derive::napi;

use crate::error::{Error, Result};
use crate::git_transport::{Credentials, RemoteUrl, Secret, Transfer};

/// The default time bound of a clone or push.
const DEFAULT_TIMEOUT_MS: f64 = 600_000.0;
/// The most bytes a clone or push may receive from the remote.
const MAX_RECEIVED_BYTES: u64 = 8 << 30;

/// Credentials for a git remote, used by the host for this call only: never written to a
/// config, a URL, a log or the container.
#[napi(object, object_to_js = false)]
pub struct GitCredentials {
    /// HTTP(S) basic user (default `x-access-token`, which hosts accept with a token).
    pub username: Option<String>,
    /// HTTP(S): a password or token. Sent only over https (or http to a loopback host).
    pub password: Option<String>,
    /// SSH: a private key file (without it, the SSH agent at `SSH_AUTH_SOCK`).
    pub ssh_key_file: Option<String>,
    /// SSH: the known_hosts file host keys are checked against (default the user's own).
    pub ssh_known_hosts_file: Option<String>,
}

fn credentials(given: Option<GitCredentials>) -> Result<Option<Credentials>> {
    let Some(c) = given else { return Ok(None) };
    let ssh = c.ssh_key_file.is_some() || c.ssh_known_hosts_file.is_some();
    match (c.password, ssh) {
        (Some(_), true) => Err(Error::invalid_argument(
            "credentials: a password and SSH files cannot be given together",
        )),
        (Some(password), false) => Ok(Some(Credentials::Basic {
            username: c.username.unwrap_or_else(|| "x-access-token".into()),
            password: Secret::new(password),
        })),
        (None, true) => Ok(Some(Credentials::Ssh {
            key_file: c.ssh_key_file.map(Into::into),
            known_hosts_file: c.ssh_known_hosts_file.map(Into::into),
        })),
        (None, false) if c.username.is_some() => Err(Error::invalid_argument(
            "credentials: a username needs a password or token",
        )),
        (None, false) => Ok(None),
    }
}

/// The transfer for `url` with these options; `INVALID_ARGUMENT` for a URL or option the
/// transports refuse.
pub fn transfer_from(
    url: &str,
    given: Option<GitCredentials>,
    ca_certificate: Option<String>,
    timeout_ms: Option<f64>,
) -> Result<Transfer> {
    let ms = timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if !ms.is_finite() || ms <= 0.0 {
        return Err(Error::invalid_argument(format!(
            "timeoutMs {ms} is not a positive number of milliseconds"
        )));
    }
    Ok(Transfer {
        url: RemoteUrl::parse(url)?,
        credentials: credentials(given)?,
        ca_certificate,
        timeout: std::time::Duration::from_millis(ms as u64),
        max_received_bytes: MAX_RECEIVED_BYTES,
    })
}
