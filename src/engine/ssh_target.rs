//! An `ssh://[user@]host[:port]` engine host, checked so that nothing in it can become an
//! option of `ssh`, and the argv that runs `docker system dial-stdio` there.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use super::options::SshOptions;
use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SshTarget {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    pub options: SshOptions,
}

fn refuse(url: &str, why: &str) -> Error {
    Error::invalid_argument(format!("engine host '{url}': {why}"))
}

fn plain(text: &str, extra: &[u8]) -> bool {
    !text.is_empty()
        && !text.starts_with('-')
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b) || extra.contains(&b))
}

impl SshTarget {
    /// `rest` is what follows `ssh://` in `url`.
    pub fn parse(url: &str, rest: &str) -> Result<SshTarget> {
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('/') || rest.contains('?') || rest.contains('#') {
            return Err(refuse(url, "an ssh host takes no path, query or fragment"));
        }
        let (user, host_port) = match rest.rsplit_once('@') {
            Some((user, host)) => (Some(user), host),
            None => (None, rest),
        };
        if let Some(user) = user {
            if !plain(user, b"") {
                return Err(refuse(
                    url,
                    "the user name has characters ssh would misread",
                ));
            }
        }
        let (host, port) = split_port(host_port).ok_or_else(|| refuse(url, "bad port"))?;
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if !plain(bare, b":") || (bare.contains(':') && !host.starts_with('[')) {
            return Err(refuse(
                url,
                "the host name is empty, starts with '-' or has odd characters",
            ));
        }
        Ok(SshTarget {
            user: user.map(str::to_string),
            host: bare.to_string(),
            port,
            options: SshOptions::default(),
        })
    }

    /// The arguments of `ssh` (without `ssh` itself) that open `docker system dial-stdio`.
    pub fn argv(&self, connect_timeout: Duration) -> Result<Vec<String>> {
        let mut argv: Vec<String> = vec![
            "-o".into(),
            "BatchMode=yes".into(),
            "-o".into(),
            format!("ConnectTimeout={}", connect_timeout.as_secs().max(1)),
        ];
        if let Some(port) = self.port {
            argv.extend(["-p".into(), port.to_string()]);
        }
        if let Some(user) = &self.user {
            argv.extend(["-l".into(), user.clone()]);
        }
        if let Some(key) = &self.options.key_file {
            argv.extend([
                "-i".into(),
                option_path("ssh.keyFile", key)?,
                "-o".into(),
                "IdentitiesOnly=yes".into(),
            ]);
        }
        if let Some(file) = &self.options.known_hosts_file {
            argv.extend([
                "-o".into(),
                format!(
                    "UserKnownHostsFile={}",
                    option_path("ssh.knownHostsFile", file)?
                ),
            ]);
        }
        argv.extend([
            "--".into(),
            self.host.clone(),
            "docker".into(),
            "system".into(),
            "dial-stdio".into(),
        ]);
        Ok(argv)
    }
}

/// A path handed to ssh: ssh splits `-o` values at blanks and reads quotes and `%` tokens,
/// so such paths are refused rather than misread.
fn option_path(name: &str, path: &Path) -> Result<String> {
    let text = path.to_str().unwrap_or_default();
    if text.is_empty()
        || text.starts_with('-')
        || text
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "\"'%".contains(c))
    {
        return Err(Error::invalid_argument(format!(
            "engine option {name} '{}' must be a path without blanks, quotes or '%'",
            path.display()
        )));
    }
    Ok(text.to_string())
}

fn split_port(host_port: &str) -> Option<(&str, Option<u16>)> {
    let port_at = if host_port.starts_with('[') {
        host_port.find("]:").map(|i| i + 1)
    } else {
        host_port.rfind(':')
    };
    match port_at {
        Some(i) => {
            let port: u16 = host_port[i + 1..].parse().ok().filter(|p| *p > 0)?;
            Some((&host_port[..i], Some(port)))
        }
        None => Some((host_port, None)),
    }
}

impl fmt::Display for SshTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ssh://")?;
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> Result<SshTarget> {
        SshTarget::parse(url, url.strip_prefix("ssh://").unwrap())
    }

    #[test]
    fn argv_is_docker_cli_like() {
        let mut target = parse("ssh://me@build-box:2222").unwrap();
        target.options.key_file = Some("/k/id".into());
        target.options.known_hosts_file = Some("/k/known".into());
        assert_eq!(
            target.argv(Duration::from_secs(7)).unwrap().join(" "),
            "-o BatchMode=yes -o ConnectTimeout=7 -p 2222 -l me -i /k/id -o IdentitiesOnly=yes \
             -o UserKnownHostsFile=/k/known -- build-box docker system dial-stdio"
        );
        let plain = parse("ssh://box").unwrap();
        assert_eq!(
            plain.argv(Duration::from_secs(1)).unwrap().join(" "),
            "-o BatchMode=yes -o ConnectTimeout=1 -- box docker system dial-stdio"
        );
        assert_eq!(
            parse("ssh://[::1]:22").unwrap().to_string(),
            "ssh://[::1]:22"
        );
    }

    #[test]
    fn option_like_or_odd_hosts_are_refused() {
        for bad in [
            "ssh://-oProxyCommand=x",
            "ssh://me@-host",
            "ssh://-me@host",
            "ssh://ho st",
            "ssh://host/path",
            "ssh://host:0",
            "ssh://host:x",
            "ssh://",
            "ssh://a;b",
            "ssh://::1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let mut target = parse("ssh://box").unwrap();
        target.options.known_hosts_file = Some("/a b".into());
        assert!(target.argv(Duration::from_secs(1)).is_err());
    }
}
