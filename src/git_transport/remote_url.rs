//! A git remote's URL, checked before libgit2 or a transport ever sees it.

use crate::error::{Error, Result};
use std::net::IpAddr;
use url::Url;

/// The transport a remote URL selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteKind {
    Http,
    Https,
    Ssh,
    Local,
}

/// A remote's URL, checked: https://, http://, ssh://, git+ssh://, ssh+git://, scp-like
/// `user@host:path`, file:// or an absolute local path. Anything else (git://, ext::, fd::,
/// a leading '-', control characters, spaces in the host, a password in the URL, an empty
/// host or path) is INVALID_ARGUMENT. A username in the URL is kept (ssh `git@host:...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    text: String,
    kind: RemoteKind,
    host: String,
}

impl RemoteUrl {
    pub fn parse(text: &str) -> Result<RemoteUrl> {
        let shown = without_password(text);
        let invalid = |why: &str| Error::invalid_argument(format!("remote URL {shown:?}: {why}"));
        if text.is_empty() {
            return Err(invalid("empty"));
        }
        if text.starts_with('-') {
            return Err(invalid("starts with '-'"));
        }
        if text.chars().any(char::is_control) {
            return Err(invalid("has a control character"));
        }
        if let Some((scheme, _)) = text.split_once("://") {
            return parse_with_scheme(text, &scheme.to_ascii_lowercase()).map_err(|e| invalid(&e));
        }
        if text.starts_with('/') {
            return parse_local_path(text).map_err(|e| invalid(&e));
        }
        parse_scp_like(text).map_err(|e| invalid(&e))
    }

    /// What libgit2 is given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn kind(&self) -> RemoteKind {
        self.kind
    }

    /// The host, without brackets around an IPv6 address; empty for a local remote.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Whether the host is localhost, in 127.0.0.0/8 or ::1.
    pub fn is_loopback(&self) -> bool {
        if self.host.eq_ignore_ascii_case("localhost") {
            return true;
        }
        self.host
            .parse::<IpAddr>()
            .is_ok_and(|address| address.is_loopback())
    }
}

impl std::fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// The text with the `user:password` before its host replaced, for an error message.
fn without_password(text: &str) -> String {
    let start = text.find("://").map_or(0, |i| i + 3);
    let rest = &text[start..];
    let end = rest.find('/').unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) if rest[..at].contains(':') => {
            format!("{}<redacted>{}", &text[..start], &rest[at..])
        }
        _ => text.to_string(),
    }
}

fn parse_with_scheme(text: &str, scheme: &str) -> Result<RemoteUrl, String> {
    let kind = match scheme {
        "https" => RemoteKind::Https,
        "http" => RemoteKind::Http,
        "ssh" | "git+ssh" | "ssh+git" => RemoteKind::Ssh,
        "file" => RemoteKind::Local,
        other => return Err(format!("the scheme {other}:// is not supported")),
    };
    if text.chars().any(char::is_whitespace) && kind != RemoteKind::Local {
        return Err("has a space".into());
    }
    let url = Url::parse(text).map_err(|e| e.to_string())?;
    if url.password().is_some() {
        return Err("has a password: give it as credentials instead".into());
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("has a query or a fragment".into());
    }
    if kind == RemoteKind::Local {
        return parse_local_path(url.path()).map(|_| RemoteUrl {
            text: text.to_string(),
            kind,
            host: String::new(),
        });
    }
    let host = match url.host() {
        Some(url::Host::Ipv6(address)) => address.to_string(),
        Some(host) => host.to_string(),
        None => return Err("has no host".into()),
    };
    check_host(&host)?;
    check_user(url.username())?;
    if url.path().trim_start_matches('/').is_empty() {
        return Err("has no path".into());
    }
    let text = if kind == RemoteKind::Ssh {
        text.to_string()
    } else {
        url.to_string()
    };
    Ok(RemoteUrl { text, kind, host })
}

fn parse_local_path(path: &str) -> Result<RemoteUrl, String> {
    if path.trim_start_matches('/').is_empty() {
        return Err("has no path".into());
    }
    // libgit2 hands any URL with a ':' and no known scheme to the ssh transport.
    if path.contains(':') {
        return Err("a local path with ':' would be taken for an ssh remote".into());
    }
    Ok(RemoteUrl {
        text: path.to_string(),
        kind: RemoteKind::Local,
        host: String::new(),
    })
}

/// `[user@]host:path` or `[user@][host]:path`, as git reads it when no "://" is present.
fn parse_scp_like(text: &str) -> Result<RemoteUrl, String> {
    let (authority, path) = split_scp_like(text)?;
    let (user, host) = match authority.rsplit_once('@') {
        Some((user, host)) => (user, host),
        None => ("", authority),
    };
    if user.contains(':') || looks_like_user_password(authority, path) {
        return Err("has a password: give it as credentials instead".into());
    }
    let host = host.trim_start_matches('[').trim_end_matches(']');
    check_host(host)?;
    check_user(user)?;
    if path.is_empty() {
        return Err("has no path".into());
    }
    Ok(RemoteUrl {
        text: text.to_string(),
        kind: RemoteKind::Ssh,
        host: host.to_string(),
    })
}

fn split_scp_like(text: &str) -> Result<(&str, &str), String> {
    let not_scp_like = || "is neither a URL nor an absolute path nor host:path".to_string();
    let bracket = text.find("@[").map(|at| at + 1);
    let bracket = bracket.or_else(|| text.starts_with('[').then_some(0));
    let colon = match bracket {
        Some(open) => {
            let close = text[open..]
                .find("]:")
                .ok_or("an unclosed '[' in the host")?;
            open + close + 1
        }
        None => text.find(':').ok_or_else(not_scp_like)?,
    };
    let (authority, path) = (&text[..colon], &text[colon + 1..]);
    if authority.contains('/') {
        return Err(not_scp_like());
    }
    if bracket.is_none() && path.starts_with(':') {
        return Err("the transport syntax <transport>::<address> is not supported".into());
    }
    Ok((authority, path))
}

/// `user:password@host:path` read as host "user": refused rather than sent to "user".
fn looks_like_user_password(authority: &str, path: &str) -> bool {
    let Some(at) = path.find('@') else {
        return false;
    };
    let after = &path[at..];
    !authority.contains('@')
        && !path[..at].contains('/')
        && after
            .find(':')
            .is_some_and(|colon| !after[..colon].contains('/'))
}

fn check_host(host: &str) -> Result<(), String> {
    if host.is_empty() {
        return Err("has no host".into());
    }
    if host.starts_with('-') {
        return Err("the host starts with '-'".into());
    }
    if host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the host has a space".into());
    }
    if host.contains(['/', '@', '\'', '"', '\\']) {
        return Err("the host has a character a host cannot have".into());
    }
    Ok(())
}

fn check_user(user: &str) -> Result<(), String> {
    if user.starts_with('-') {
        return Err("the user starts with '-'".into());
    }
    if user.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the user has a space".into());
    }
    Ok(())
}
