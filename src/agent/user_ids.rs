//! A container user spec (`name`, `uid`, `name:group`, `uid:gid`) resolved to numeric ids
//! from the container's own /etc/passwd and /etc/group, read by whatever `AccountReader`
//! the caller has: the agent (`agent_accounts`), or `fileio`'s reader that tries the
//! container's root on the host and the archive endpoint too. The container controls both
//! files, so no more than `ACCOUNT_FILE_LIMIT` bytes of either are ever read.

use std::future::Future;

use crate::container_archive::EntryOwner;
use crate::error::{Error, ErrorCode, Result};
use container_isolation_agent::protocol::Creds;

/// The most read of /etc/passwd or /etc/group (a larger one is `EFBIG`).
pub const ACCOUNT_FILE_LIMIT: u64 = 4 << 20;

/// Reads a container's account files: `None` for a path that is not there (or not a
/// regular file).
pub trait AccountReader: Sync {
    fn container(&self) -> &str;

    fn read(&self, path: &str) -> impl Future<Output = Result<Option<Vec<u8>>>> + Send;
}

/// `EACCES` for an account file no reader at hand may read.
pub fn not_readable(container: &str, path: &str) -> Error {
    Error::new(
        ErrorCode::Eacces,
        format!(
            "'{path}' in container '{container}': not readable from here (its root is not reachable and the engine is unsafe for it)"
        ),
    )
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
pub async fn resolve_user(files: &impl AccountReader, spec: &str) -> Result<UserIds> {
    if spec.is_empty() || spec == "root" || spec == "0" {
        return Ok(UserIds::root());
    }
    // No account name holds either (a line ends at a newline, a C string at a NUL): a
    // container's own lookups would never match a line a hostile file writes with one.
    if spec.contains(['\0', '\n']) {
        return Err(Error::invalid_argument(format!(
            "user {spec:?}: a NUL or a newline is in no user or group name"
        )));
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

#[cfg(test)]
#[path = "user_ids_props.rs"]
mod props;
