//! One address of an Engine API, parsed from a `DOCKER_HOST`-style URL.

use std::fmt;
use std::path::PathBuf;

use super::options::TlsOptions;
use super::ssh_target::SshTarget;
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    Unix(PathBuf),
    /// `http://host:port` (a `tcp://` host without TLS is rewritten to this form).
    Http(String),
    /// `https://host:port`: a `tcp://` host with TLS, its files resolved.
    Https {
        url: String,
        tls: TlsOptions,
    },
    /// `ssh://[user@]host[:port]`, reached through the system `ssh` client.
    Ssh(SshTarget),
}

impl Endpoint {
    /// Parses a `DOCKER_HOST`-style URL: `unix://`, `tcp://`, `http://` or `ssh://`.
    pub fn parse_host(host: &str) -> Result<Endpoint> {
        if let Some(path) = host.strip_prefix("unix://") {
            if path.is_empty() {
                return Err(Error::invalid_argument(format!(
                    "engine host '{host}' names no socket path"
                )));
            }
            Ok(Endpoint::Unix(PathBuf::from(path)))
        } else if let Some(rest) = host.strip_prefix("tcp://") {
            Ok(Endpoint::Http(format!("http://{}", authority(host, rest)?)))
        } else if let Some(rest) = host.strip_prefix("http://") {
            Ok(Endpoint::Http(format!("http://{}", authority(host, rest)?)))
        } else if let Some(rest) = host.strip_prefix("ssh://") {
            Ok(Endpoint::Ssh(SshTarget::parse(host, rest)?))
        } else if host.starts_with('/') {
            Ok(Endpoint::Unix(PathBuf::from(host)))
        } else {
            Err(Error::invalid_argument(format!(
                "engine host '{host}' is not supported: use unix://, tcp://, http:// or ssh://"
            )))
        }
    }

    /// This endpoint spoken over TLS; only a `tcp://` (`http://`) host can be.
    pub fn with_tls(self, tls: TlsOptions) -> Result<Endpoint> {
        match self {
            Endpoint::Http(url) => Ok(Endpoint::Https {
                url: url.replacen("http://", "https://", 1),
                tls,
            }),
            Endpoint::Https { url, .. } => Ok(Endpoint::Https { url, tls }),
            other => Err(Error::invalid_argument(format!(
                "engine option tls applies to a tcp:// host, not {other}"
            ))),
        }
    }

    pub fn is_unix(&self) -> bool {
        matches!(self, Endpoint::Unix(_))
    }
}

/// The `host:port` of a tcp URL, without a path (a trailing `/` is allowed).
fn authority<'a>(host: &str, rest: &'a str) -> Result<&'a str> {
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.is_empty() || rest.contains('/') || rest.chars().any(char::is_whitespace) {
        return Err(Error::invalid_argument(format!(
            "engine host '{host}' is not a host:port"
        )));
    }
    Ok(rest)
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Unix(path) => write!(f, "unix://{}", path.display()),
            Endpoint::Http(url) | Endpoint::Https { url, .. } => f.write_str(url),
            Endpoint::Ssh(target) => target.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn schemes() {
        assert_eq!(
            Endpoint::parse_host("tcp://10.0.0.1:2376/").unwrap(),
            Endpoint::Http("http://10.0.0.1:2376".into())
        );
        assert_eq!(
            Endpoint::parse_host("unix:///run/x.sock").unwrap(),
            Endpoint::Unix("/run/x.sock".into())
        );
        let ssh = Endpoint::parse_host("ssh://me@box:2222").unwrap();
        assert_eq!(ssh.to_string(), "ssh://me@box:2222");
        for bad in [
            "ftp://x",
            "tcp://",
            "tcp://h:1/path",
            "unix://",
            "npipe:////./pipe/x",
        ] {
            let err = Endpoint::parse_host(bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument, "{bad}");
        }
    }

    #[test]
    fn tls_only_on_tcp() {
        let tls = TlsOptions::default();
        let https = Endpoint::parse_host("tcp://h:2376")
            .unwrap()
            .with_tls(tls.clone())
            .unwrap();
        assert_eq!(https.to_string(), "https://h:2376");
        let err = Endpoint::parse_host("unix:///x.sock")
            .unwrap()
            .with_tls(tls)
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument);
    }
}
