//! What one transfer is: the remote, the caller's credentials and its bounds; and the checks
//! that refuse a bad combination before anything connects.

use super::credentials::Credentials;
use super::remote_url::{RemoteKind, RemoteUrl};
use super::ssh_command;
use crate::error::{Error, Result};
use std::time::Duration;

/// The time bound of a clone or push when the caller gives none.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The most bytes a clone or push may receive from the remote.
const MAX_RECEIVED_BYTES: u64 = 8 << 30;

#[derive(Debug, Clone)]
pub struct Transfer {
    pub url: RemoteUrl,
    pub credentials: Option<Credentials>,
    /// PEM certificate(s) trusted for HTTPS in addition to the system's roots.
    pub ca_certificate: Option<String>,
    /// The whole transfer; past it TIMEOUT.
    pub timeout: Duration,
    /// Most bytes read from the remote (a fetch's pack); past it LIMIT_EXCEEDED.
    pub max_received_bytes: u64,
}

impl Transfer {
    /// A transfer with `url` (INVALID_ARGUMENT if the transports refuse it), the default
    /// time bound unless `timeout` is given, and the received-bytes bound.
    pub fn new(
        url: &str,
        credentials: Option<Credentials>,
        ca_certificate: Option<String>,
        timeout: Option<Duration>,
    ) -> Result<Transfer> {
        Ok(Transfer {
            url: RemoteUrl::parse(url)?,
            credentials,
            ca_certificate,
            timeout: timeout.unwrap_or(DEFAULT_TIMEOUT),
            max_received_bytes: MAX_RECEIVED_BYTES,
        })
    }

    /// INVALID_ARGUMENT for credentials that do not fit the URL or would travel in clear.
    pub(super) fn check(&self) -> Result<()> {
        let url = &self.url;
        match (&self.credentials, url.kind()) {
            (Some(Credentials::Basic { username, .. }), RemoteKind::Https) => {
                check_username(username)
            }
            (Some(Credentials::Basic { username, .. }), RemoteKind::Http) => {
                if !url.is_loopback() {
                    return Err(Error::invalid_argument(format!(
                        "{url}: credentials are sent over plain http only to a loopback host; use https"
                    )));
                }
                check_username(username)
            }
            (
                Some(Credentials::Ssh {
                    key_file,
                    known_hosts_file,
                }),
                RemoteKind::Ssh,
            ) => {
                ssh_command::check_file_option("key file", key_file.as_deref())?;
                ssh_command::check_file_option("known_hosts file", known_hosts_file.as_deref())
            }
            (Some(Credentials::Basic { .. }), _) => Err(Error::invalid_argument(format!(
                "{url}: basic credentials are for an http(s) remote"
            ))),
            (Some(Credentials::Ssh { .. }), _) => Err(Error::invalid_argument(format!(
                "{url}: ssh credentials are for an ssh remote"
            ))),
            (None, _) => Ok(()),
        }?;
        if let Some(pem) = &self.ca_certificate {
            let certificates = reqwest::Certificate::from_pem_bundle(pem.as_bytes()).ok();
            if certificates.is_none_or(|certificates| certificates.is_empty()) {
                return Err(Error::invalid_argument(
                    "ca_certificate: no PEM certificate in it",
                ));
            }
        }
        Ok(())
    }
}

fn check_username(username: &str) -> Result<()> {
    if username.contains(':') || username.chars().any(char::is_control) {
        return Err(Error::invalid_argument(
            "a basic-auth username cannot have ':' or a control character",
        ));
    }
    Ok(())
}
