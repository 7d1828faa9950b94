//! A container user spec (`name`, `uid`, `name:group`, `uid:gid`) resolved to numeric ids
//! from the container's own /etc/passwd and /etc/group: from its root on the host where
//! that is reachable, else through the archive endpoint (images without a shell work too).
//! The container controls both files, so no more than `ACCOUNT_FILE_LIMIT` bytes of either
//! are ever read.

use std::sync::Arc;

use super::host_files::{Host, HostFiles};
use crate::agent::{AgentConnection, AgentFiles, AgentReply, Creds};
use crate::container_archive::{EngineFiles, EntryOwner};
use crate::error::{Error, ErrorCode, Result};

/// The most read of /etc/passwd or /etc/group (a larger one is `EFBIG`).
pub const ACCOUNT_FILE_LIMIT: u64 = 4 << 20;

/// Where the account files are read from: the container's root on the host, else the
/// engine unless that is unsafe for the container (`None`).
pub struct AccountFiles<'a> {
    pub container: &'a str,
    pub host: Option<&'a HostFiles>,
    /// The container's agent, reading as root inside the container.
    pub agent: Option<&'a Arc<AgentConnection>>,
    pub engine: Option<EngineFiles<'a>>,
}

impl AccountFiles<'_> {
    fn container(&self) -> &str {
        self.container
    }

    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        if let Some(host) = self.host {
            let (host, at) = (host.clone(), path.to_string());
            let read =
                tokio::task::spawn_blocking(move || host.read_bounded(&at, ACCOUNT_FILE_LIMIT))
                    .await
                    .map_err(|e| {
                        Error::new(ErrorCode::EngineError, format!("reading {path}: {e}"))
                    })??;
            if let Host::Done(found) = read {
                return Ok(found);
            }
        }
        if let Some(connection) = self.agent {
            let files = AgentFiles {
                connection: connection.clone(),
                creds: Creds::default(),
            };
            match files.read_bounded(path, 0, ACCOUNT_FILE_LIMIT).await {
                Ok(AgentReply::Done(data)) => return Ok(Some(data)),
                Ok(AgentReply::NotRegular) => return Ok(None),
                Err(err) if err.code == ErrorCode::Enoent => return Ok(None),
                Err(err) if err.code == ErrorCode::Efbig => return Err(err),
                Err(_) => {}
            }
        }
        match &self.engine {
            Some(engine) => engine.read_small(path, ACCOUNT_FILE_LIMIT).await,
            None => Err(Error::new(
                ErrorCode::Eacces,
                format!(
                    "'{path}' in container '{}': not readable from here (its root is not reachable and the engine is unsafe for it)",
                    self.container
                ),
            )),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserIds {
    pub uid: u32,
    pub gid: u32,
    pub home: Option<String>,
    /// Supplementary groups: those /etc/group lists the user's name in.
    pub groups: Vec<u32>,
}

impl UserIds {
    pub fn root() -> UserIds {
        UserIds {
            uid: 0,
            gid: 0,
            home: Some("/root".into()),
            groups: Vec::new(),
        }
    }

    /// Who the session agent acts as for this user.
    pub fn creds(&self) -> Creds {
        Creds {
            uid: self.uid,
            gid: self.gid,
            groups: self.groups.clone(),
        }
    }

    pub fn owner(&self) -> EntryOwner {
        EntryOwner {
            uid: self.uid,
            gid: self.gid,
        }
    }
}

struct PasswdEntry {
    name: String,
    uid: u32,
    gid: u32,
    home: String,
}

fn parse_passwd(text: &str) -> Vec<PasswdEntry> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() < 6 {
                return None;
            }
            Some(PasswdEntry {
                name: f[0].to_string(),
                uid: f[2].parse().ok()?,
                gid: f[3].parse().ok()?,
                home: f[5].to_string(),
            })
        })
        .collect()
}

struct GroupEntry {
    name: String,
    gid: u32,
    members: Vec<String>,
}

fn parse_group(text: &str) -> Vec<GroupEntry> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() < 3 {
                return None;
            }
            Some(GroupEntry {
                name: f[0].to_string(),
                gid: f[2].parse().ok()?,
                members: f
                    .get(3)
                    .map(|m| {
                        m.split(',')
                            .filter(|m| !m.is_empty())
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// Resolves `spec` (empty means root) the way the engine resolves `--user`.
pub async fn resolve_user(files: &AccountFiles<'_>, spec: &str) -> Result<UserIds> {
    if spec.is_empty() || spec == "root" || spec == "0" {
        return Ok(UserIds::root());
    }
    let (user, group) = match spec.split_once(':') {
        Some((u, g)) => (u, Some(g)),
        None => (spec, None),
    };
    let passwd = files
        .read("/etc/passwd")
        .await?
        .map(|b| parse_passwd(&String::from_utf8_lossy(&b)))
        .unwrap_or_default();
    let entry = passwd
        .iter()
        .find(|e| e.name == user || user.parse::<u32>().ok() == Some(e.uid));
    let uid = match (user.parse::<u32>(), entry) {
        (Ok(uid), _) => uid,
        (Err(_), Some(e)) => e.uid,
        (Err(_), None) => {
            return Err(Error::invalid_argument(format!(
                "user '{user}' is not in /etc/passwd of container '{}'",
                files.container()
            )))
        }
    };
    let needs_groups = entry.is_some() || group.is_some_and(|g| g.parse::<u32>().is_err());
    let groups = if needs_groups {
        files
            .read("/etc/group")
            .await?
            .map(|b| parse_group(&String::from_utf8_lossy(&b)))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let gid = match group {
        None => entry.map(|e| e.gid).unwrap_or(0),
        Some(g) => match g.parse::<u32>() {
            Ok(gid) => gid,
            Err(_) => groups
                .iter()
                .find(|e| e.name == g)
                .map(|e| e.gid)
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "group '{g}' is not in /etc/group of container '{}'",
                        files.container()
                    ))
                })?,
        },
    };
    let supplementary = entry
        .map(|e| {
            groups
                .iter()
                .filter(|g| g.members.contains(&e.name))
                .map(|g| g.gid)
                .collect()
        })
        .unwrap_or_default();
    Ok(UserIds {
        uid,
        gid,
        home: entry.map(|e| e.home.clone()),
        groups: supplementary,
    })
}

/// The ids `spec` (else the container's configured user) has in `container`, read through
/// its agent (falling back to the engine).
pub async fn container_user(
    engine: &crate::engine::Engine,
    container: &str,
    spec: Option<&str>,
    agent: &Arc<AgentConnection>,
) -> Result<UserIds> {
    let spec = match spec {
        Some(spec) => spec.to_string(),
        None => engine
            .inspect_container(container, &format!("container '{container}'"))
            .await?
            .config
            .and_then(|c| c.user)
            .unwrap_or_default(),
    };
    let accounts = AccountFiles {
        container,
        host: None,
        agent: Some(agent),
        // The agent reads as root; the archive endpoints may be unsafe for the container.
        engine: None,
    };
    resolve_user(&accounts, &spec).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_passwd_and_group() {
        let passwd = parse_passwd(
            "root:x:0:0:root:/root:/bin/bash\nagent:x:1000:1001::/home/agent:/bin/sh\nbad line\n",
        );
        assert_eq!(passwd.len(), 2);
        assert_eq!((passwd[1].uid, passwd[1].gid), (1000, 1001));
        assert_eq!(passwd[1].home, "/home/agent");
        let groups = parse_group("agent:x:1001:\nsudo:x:27:agent,other\n");
        assert_eq!((groups[0].name.as_str(), groups[0].gid), ("agent", 1001));
        assert_eq!(groups[1].members, vec!["agent", "other"]);
    }
}
