//! Credentials for a remote, as the caller gives them; nothing here reads them from the
//! environment, a credential helper or the repository's config.

use std::fmt;
use std::path::PathBuf;

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
