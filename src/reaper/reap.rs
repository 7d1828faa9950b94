//! Finding and removing orphaned containers, never touching what is not ours: only
//! containers labelled with this base directory are considered; a `process` container goes
//! once its owner is gone (same host), a `session` container only when the caller names
//! the active sessions and it is not among them.

use std::collections::HashSet;

use super::process_clones::trash_after_removal;
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::{labels, Lifetime, LineFolder, OwnerIdentity};
use crate::runtime::{managed_containers, remove_quietly, ManagedContainer};
use crate::runtime::{owner_status, OwnerStatus};
use crate::workspace_volume::{labelled_volumes, remove_member_volume, remove_volume};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContainerReap {
    /// Container names removed (or, in a dry run, that would be).
    pub removed: Vec<String>,
    pub kept: Vec<String>,
    /// Sessions whose containers were removed.
    pub sessions: Vec<String>,
}

/// Whether the reaper should remove this container.
pub fn is_orphan(
    container: &ManagedContainer,
    active_sessions: Option<&HashSet<String>>,
    me: &OwnerIdentity,
) -> bool {
    match container.lifetime() {
        Lifetime::Process => owner_status(&container.labels, me) == OwnerStatus::Gone,
        Lifetime::Session => {
            active_sessions.is_some_and(|active| !active.contains(container.session()))
        }
    }
}

/// Removes the line folder a removed container had under its base directory.
fn remove_line_folder(container: &ManagedContainer) {
    if let Some(base) = container.labels.get(labels::BASE_DIR) {
        let label = |k: &str| container.labels.get(k).map(String::as_str);
        LineFolder::remove_for(std::path::Path::new(base), &container.name, label);
    }
}

/// A service set's holder after the containers that share its network namespace: Podman
/// refuses to remove it while they exist.
fn holders_last(listed: &mut [ManagedContainer]) {
    listed.sort_by_key(|c| labels::is_set_holder(&c.name, &c.labels));
}

pub async fn reap_containers(
    engine: &Engine,
    base_dir: &str,
    active_sessions: Option<&HashSet<String>>,
    dry_run: bool,
) -> Result<ContainerReap> {
    let me = OwnerIdentity::current();
    let mut listed =
        managed_containers(engine, &[format!("{}={base_dir}", labels::BASE_DIR)]).await?;
    holders_last(&mut listed);
    let mut report = ContainerReap::default();
    for container in listed {
        if !is_orphan(&container, active_sessions, me) {
            report.kept.push(container.name);
            continue;
        }
        if dry_run || remove_quietly(engine, &container.name).await? {
            if !dry_run {
                remove_member_leftovers(engine, &container).await;
                remove_line_folder(&container);
            }
            report.sessions.push(container.session().to_string());
            report.removed.push(container.name);
        }
    }
    Ok(report)
}

/// Removes the `process`-lifetime containers `owner` created, whatever their base
/// directory, and trashes the clones of their `process` workspaces: what exit hooks and the
/// watchdog do. Returns the containers removed.
pub async fn remove_own_process_containers(
    engine: &Engine,
    owner: &OwnerIdentity,
) -> Result<Vec<String>> {
    let filters = [
        format!("{}={}", labels::LIFETIME, Lifetime::Process.as_str()),
        format!("{}={}", labels::OWNER_PID, owner.pid),
        format!("{}={}", labels::OWNER_START, owner.start),
        format!("{}={}", labels::OWNER_BOOT_ID, owner.boot_id),
    ];
    let mut removed = Vec::new();
    let mut listed = managed_containers(engine, &filters).await?;
    holders_last(&mut listed);
    for container in listed {
        if remove_quietly(engine, &container.name).await? {
            remove_member_leftovers(engine, &container).await;
            remove_line_folder(&container);
            removed.push(container);
        }
    }
    let mut member_filters = vec![labels::POOL.to_string()];
    member_filters.extend(filters[1..].iter().cloned());
    for member in managed_containers(engine, &member_filters).await? {
        if member.unclaimed_member() && remove_quietly(engine, &member.name).await? {
            remove_member_leftovers(engine, &member).await;
            remove_line_folder(&member);
            removed.push(member);
        }
    }
    let trashed = removed.clone();
    let _ = tokio::task::spawn_blocking(move || trash_after_removal(&trashed)).await;
    let mut names: Vec<String> = removed.into_iter().map(|c| c.name).collect();
    names.extend(remove_own_process_volumes(engine, &filters).await);
    Ok(names)
}

/// What an unclaimed member leaves once removed: its volume (volume storage) and its
/// folder.
async fn remove_member_leftovers(engine: &Engine, member: &ManagedContainer) {
    if member.unclaimed_member() {
        remove_member_volume(engine, &member.name).await;
    }
    remove_member_folder(member).await;
}

/// An unclaimed member's clone folder (`<base>/pool/<its name>`, as its labels say), once
/// the member is removed. A claimed member's folder is its session's clone: never touched.
async fn remove_member_folder(member: &ManagedContainer) {
    if !member.unclaimed_member() {
        return;
    }
    let folder = std::path::PathBuf::from(member.label(labels::CLONE_PATH));
    let (Some(base), Some(name)) = (
        member.labels.get(labels::BASE_DIR),
        folder.file_name().and_then(|n| n.to_str()),
    ) else {
        return;
    };
    if name == member.name && folder == std::path::Path::new(base).join("pool").join(name) {
        let _ = tokio::fs::remove_dir_all(&folder).await;
    }
}

/// The `process` sessions' volumes of the same owner, after their containers: a session of
/// that lifetime leaves nothing on the engine once its owner is gone.
async fn remove_own_process_volumes(engine: &Engine, owner_filters: &[String]) -> Vec<String> {
    let mut filters = vec![
        format!("{}=true", labels::MANAGED),
        labels::CONTAINER.to_string(),
    ];
    filters.extend(owner_filters.iter().cloned());
    let Ok(volumes) = labelled_volumes(engine, &filters).await else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for (name, _) in volumes {
        if remove_volume(engine, &name).await.is_ok() {
            removed.push(name);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(lifetime: &str, session: &str, owner: &OwnerIdentity) -> ManagedContainer {
        ManagedContainer {
            name: format!("c-{session}"),
            labels: labels::owner_labels(owner)
                .into_iter()
                .chain([
                    (labels::LIFETIME, lifetime.to_string()),
                    (labels::SESSION, session.to_string()),
                ])
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }
    }

    #[test]
    fn a_member_lives_with_its_process_until_a_session_claims_it() {
        let me = OwnerIdentity::current();
        let dead = OwnerIdentity {
            start: "1".into(),
            ..me.clone()
        };
        let member = |name: &str, lifetime: &str, owner: &OwnerIdentity| {
            let mut c = container(lifetime, "wp-0123abcd-aaaa", owner);
            c.name = name.to_string();
            c.labels.insert(labels::POOL.to_string(), "key".to_string());
            c
        };
        let unclaimed = member("wp-0123abcd-aaaa", "session", &dead);
        assert_eq!(unclaimed.lifetime(), Lifetime::Process);
        assert!(is_orphan(&unclaimed, None, me));
        assert!(!is_orphan(
            &member("wp-0123abcd-aaaa", "session", me),
            None,
            me
        ));
        let claimed = member("ws-s7-0123abcd", "session", &dead);
        assert_eq!(claimed.session(), "s7");
        assert_eq!(claimed.lifetime(), Lifetime::Session);
        assert!(!is_orphan(&claimed, None, me));
        let active: HashSet<String> = ["s7".to_string()].into();
        assert!(!is_orphan(&claimed, Some(&active), me));
    }

    #[test]
    fn a_service_sets_holder_is_removed_after_its_members() {
        let me = OwnerIdentity::current();
        let member = |name: &str| {
            let mut c = container("process", "s1", me);
            c.name = name.to_string();
            c.labels
                .insert(labels::SERVICE_SET.to_string(), "ws-s1-svc".to_string());
            c
        };
        let mut listed = vec![
            member("ws-s1-svc"),
            member("ws-s1-svc-db"),
            container("process", "other", me),
            member("ws-s1"),
        ];
        holders_last(&mut listed);
        let names: Vec<&str> = listed.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["ws-s1-svc-db", "c-other", "ws-s1", "ws-s1-svc"]);
    }

    #[test]
    fn lifetimes_decide() {
        let me = OwnerIdentity::current();
        let dead = OwnerIdentity {
            start: "1".into(),
            ..me.clone()
        };
        let active: HashSet<String> = ["s1".to_string()].into();
        assert!(!is_orphan(&container("process", "p", me), None, me));
        assert!(is_orphan(&container("process", "p", &dead), None, me));
        assert!(!is_orphan(&container("session", "s2", &dead), None, me));
        assert!(!is_orphan(
            &container("session", "s1", &dead),
            Some(&active),
            me
        ));
        assert!(is_orphan(
            &container("session", "s2", me),
            Some(&active),
            me
        ));
    }
}
