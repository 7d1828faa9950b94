//! Credentials for a remote, as the caller gives them; nothing here reads them from the
//! environment, a credential helper or the repository's config.

use std::fmt;
use std::path::PathBuf;

use crate::error::{Error, Result};

/// The basic-auth user when a token comes without one (hosts accept any user with a token).
const TOKEN_USER: &str = "x-access-token";

/// A password or token. Its Debug and Display print `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(secret: String) -> Secret {
        Secret(secret)
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Credentials from the caller only. Debug never prints the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// HTTP(S) basic: a password or token. Sent only over https, or http to a loopback host
    /// (else INVALID_ARGUMENT when the transfer starts: refusing beats leaking a token).
    Basic { username: String, password: Secret },
    /// SSH through the system `ssh` client: a private key file, else the SSH agent
    /// (SSH_AUTH_SOCK); host keys checked against `known_hosts_file`, else the user's own.
    Ssh {
        key_file: Option<PathBuf>,
        known_hosts_file: Option<PathBuf>,
    },
}

/// The credential fields a caller may fill, before they are known to make one kind.
#[derive(Default)]
pub struct GivenCredentials {
    pub username: Option<String>,
    pub password: Option<String>,
    pub ssh_key_file: Option<PathBuf>,
    pub ssh_known_hosts_file: Option<PathBuf>,
}

impl Credentials {
    /// The credentials these fields make: a password (with its user, by default
    /// `x-access-token`) or SSH files, never both; a user alone is INVALID_ARGUMENT.
    pub fn from_given(given: GivenCredentials) -> Result<Option<Credentials>> {
        let ssh = given.ssh_key_file.is_some() || given.ssh_known_hosts_file.is_some();
        match (given.password, ssh) {
            (Some(_), true) => Err(Error::invalid_argument(
                "credentials: a password and SSH files cannot be given together",
            )),
            (Some(password), false) => Ok(Some(Credentials::Basic {
                username: given.username.unwrap_or_else(|| TOKEN_USER.into()),
                password: Secret::new(password),
            })),
            (None, true) => Ok(Some(Credentials::Ssh {
                key_file: given.ssh_key_file,
                known_hosts_file: given.ssh_known_hosts_file,
            })),
            (None, false) if given.username.is_some() => Err(Error::invalid_argument(
                "credentials: a username needs a password or token",
            )),
            (None, false) => Ok(None),
        }
    }
}
