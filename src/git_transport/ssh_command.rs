//! The argv of the system `ssh` for one git service, and the remote command it carries,
//! built as git builds them; anything that could be read as an option or shell syntax on
//! either side is refused.

use super::credentials::Credentials;
use super::remote_url::{RemoteKind, RemoteUrl};
use crate::error::{Error, Result};
use std::path::Path;
use std::process::Command;

/// Where an ssh remote lives: `ssh [-p port] [-l user] -- host`, and the repository path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SshTarget {
    pub host: String,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub path: String,
}

pub(super) fn target(url: &RemoteUrl) -> Result<SshTarget> {
    if url.kind() != RemoteKind::Ssh {
        return Err(Error::invalid_argument(format!("{url}: not an ssh remote")));
    }
    let target = if url.as_str().contains("://") {
        url_target(url)?
    } else {
        scp_like_target(url)
    };
    check_argument("host", &target.host)?;
    if let Some(user) = &target.user {
        check_argument("user", user)?;
    }
    Ok(target)
}

fn url_target(url: &RemoteUrl) -> Result<SshTarget> {
    let parsed = url::Url::parse(url.as_str())
        .map_err(|e| Error::invalid_argument(format!("{url}: {e}")))?;
    let path = percent_decode(parsed.path())
        .ok_or_else(|| Error::invalid_argument(format!("{url}: a path that is not UTF-8")))?;
    let path = match path.strip_prefix("/~") {
        Some(rest) => format!("~{rest}"),
        None => path,
    };
    let user = percent_decode(parsed.username()).filter(|user| !user.is_empty());
    Ok(SshTarget {
        host: url.host().to_string(),
        port: parsed.port(),
        user,
        path,
    })
}

fn scp_like_target(url: &RemoteUrl) -> SshTarget {
    let text = url.as_str();
    let authority_end = match text.find("]:") {
        Some(close) if text.contains('[') => close + 1,
        _ => text.find(':').unwrap_or(text.len()),
    };
    let authority = &text[..authority_end];
    let user = authority.rsplit_once('@').map(|(user, _)| user.to_string());
    SshTarget {
        host: url.host().to_string(),
        port: None,
        user: user.filter(|user| !user.is_empty()),
        path: text[authority_end + 1..].to_string(),
    }
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn check_argument(what: &str, value: &str) -> Result<()> {
    if value.is_empty() || value.starts_with('-') || value.chars().any(char::is_control) {
        return Err(Error::invalid_argument(format!(
            "the ssh {what} {value:?} is empty, starts with '-' or has a control character"
        )));
    }
    Ok(())
}

/// `git-upload-pack '<path>'`: the one string ssh hands the remote user's shell.
pub(super) fn remote_command(program: &str, path: &str) -> Result<String> {
    let refused = path.is_empty()
        || path.starts_with('-')
        || path.contains(['\'', '!'])
        || path.chars().any(char::is_control);
    if refused {
        return Err(Error::invalid_argument(format!(
            "the ssh repository path {path:?} is empty, starts with '-' or has a quote, '!' \
             or a control character"
        )));
    }
    Ok(format!("{program} '{path}'"))
}

/// A file given to ssh through `-o NAME=FILE` or `-i`: ssh splits such values at spaces
/// and expands `%` tokens in them, so neither may appear.
pub(super) fn check_file_option(what: &str, file: Option<&Path>) -> Result<()> {
    let Some(file) = file else { return Ok(()) };
    let text = file
        .to_str()
        .ok_or_else(|| Error::invalid_argument(format!("the ssh {what} path is not UTF-8")))?;
    let refused = text.is_empty()
        || text.chars().any(|c| c.is_whitespace() || c.is_control())
        || text.contains(['%', '"', '\'', '\\', '~']);
    if refused {
        return Err(Error::invalid_argument(format!(
            "the ssh {what} path {text:?} has a space, a quote, '%', '~' or a control character"
        )));
    }
    if !file.is_file() {
        return Err(Error::invalid_argument(format!(
            "the ssh {what} {text:?} is not a file"
        )));
    }
    Ok(())
}

/// `ssh -o BatchMode=yes ... -- HOST "git-upload-pack '<path>'"`; argv only, no shell here.
pub(super) fn command(
    target: &SshTarget,
    credentials: Option<&Credentials>,
    program: &str,
) -> Result<Command> {
    let remote = remote_command(program, &target.path)?;
    let mut command = Command::new("ssh");
    for option in [
        "BatchMode=yes",
        "StrictHostKeyChecking=yes",
        "ControlMaster=no",
        "ControlPath=none",
    ] {
        command.arg("-o").arg(option);
    }
    if let Some(Credentials::Ssh {
        key_file,
        known_hosts_file,
    }) = credentials
    {
        if let Some(file) = known_hosts_file {
            command
                .arg("-o")
                .arg(format!("UserKnownHostsFile={}", file.display()));
        }
        if let Some(key) = key_file {
            command
                .arg("-i")
                .arg(key)
                .arg("-o")
                .arg("IdentitiesOnly=yes");
        }
    }
    if let Some(port) = target.port {
        command.arg("-p").arg(port.to_string());
    }
    if let Some(user) = &target.user {
        command.arg("-l").arg(user);
    }
    command.arg("--").arg(&target.host).arg(remote);
    #[cfg(test)]
    if let Some(socket) = test_agent::socket() {
        command.env("SSH_AUTH_SOCK", socket);
    }
    Ok(command)
}

/// Tests run in parallel in one process, so one that uses its own ssh-agent names the
/// agent's socket for the ssh it spawns here instead of in the process's environment.
#[cfg(test)]
pub(super) mod test_agent {
    use std::cell::RefCell;
    use std::path::PathBuf;

    thread_local! {
        static SOCKET: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
    }

    pub fn set(socket: Option<PathBuf>) {
        SOCKET.with(|s| *s.borrow_mut() = socket);
    }

    pub(super) fn socket() -> Option<PathBuf> {
        SOCKET.with(|s| s.borrow().clone())
    }
}
