//! A git remote as the host names it (`Workspaces.push`, `create({ repository })`): its URL,
//! credentials, extra CA and time bound, converted into a `git_transport::Transfer`.
//! Credentials are taken from the call only and never kept.

use napi_derive::napi;

use super::durations::positive_duration_ms;
use crate::error::Result;
use crate::git_transport::{Credentials, GivenCredentials, Transfer};

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
    Credentials::from_given(GivenCredentials {
        username: c.username,
        password: c.password,
        ssh_key_file: c.ssh_key_file.map(Into::into),
        ssh_known_hosts_file: c.ssh_known_hosts_file.map(Into::into),
    })
}

/// The transfer for `url` with these options; `INVALID_ARGUMENT` for a URL or option the
/// transports refuse (default bounds: the core's).
pub fn transfer_from(
    url: &str,
    given: Option<GitCredentials>,
    ca_certificate: Option<String>,
    timeout_ms: Option<f64>,
) -> Result<Transfer> {
    let timeout = positive_duration_ms(timeout_ms, "timeoutMs")?;
    Transfer::new(url, credentials(given)?, ca_certificate, timeout)
}
