//! A container as the engine's inspect and list answers describe it, turned into the
//! `ContainerInfo` this library reports: state, times, the image as created, labels, and
//! the bind mounts (the session agent's own and its line's folder apart).

use std::collections::BTreeMap;

use bollard::models::{ContainerInspectResponse, ContainerSummary, MountPoint};

use super::container_info::{parse_engine_time, ContainerInfo, ContainerState};
use super::container_mount::ContainerMount;
use super::labels;

/// Where containers this library creates have the session agent, bind-mounted read-only.
pub const AGENT_MOUNT: &str = "/.container-isolation-agent";

/// Where containers this library creates on a local engine have the folder of the agent's
/// direct line, bind-mounted read-only (see the agent room's `agent_line`).
pub const LINE_MOUNT: &str = "/.container-isolation-line";

/// The container's bind mounts, without the agent's own.
pub fn bind_mounts(points: Option<Vec<MountPoint>>) -> Vec<ContainerMount> {
    bind_mounts_with_agent(points).0
}

/// The line folder's mount, if the container has one.
pub fn line_mount(points: Option<Vec<MountPoint>>) -> Option<ContainerMount> {
    all_binds(points).find(|m| m.target == LINE_MOUNT)
}

fn all_binds(points: Option<Vec<MountPoint>>) -> impl Iterator<Item = ContainerMount> {
    points
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            p.typ
                .as_ref()
                .is_none_or(|t| t.to_string().eq_ignore_ascii_case("bind"))
        })
        .filter_map(|p| {
            Some(ContainerMount::bind(
                &p.source?,
                &p.destination?,
                p.rw == Some(false),
            ))
        })
}

/// The container's bind mounts, and the agent's mount apart from them (the line's folder
/// is in neither).
pub fn bind_mounts_with_agent(
    points: Option<Vec<MountPoint>>,
) -> (Vec<ContainerMount>, Option<ContainerMount>) {
    let (agent, mounts): (Vec<_>, Vec<_>) = all_binds(points)
        .filter(|m| m.target != LINE_MOUNT)
        .partition(|m| m.target == AGENT_MOUNT);
    (mounts, agent.into_iter().next())
}

pub fn info_from_inspect(inspected: ContainerInspectResponse) -> ContainerInfo {
    let state = inspected.state.unwrap_or_default();
    let status = state
        .status
        .map(|s| s.to_string())
        .unwrap_or_else(|| "created".to_string());
    let running = state.running == Some(true);
    let exit_code = (!running && status != "created")
        .then_some(state.exit_code)
        .flatten();
    let name = inspected
        .name
        .map(|n| n.trim_start_matches('/').to_string())
        .unwrap_or_default();
    let engine_id = inspected.id.unwrap_or_default();
    let config = inspected.config.unwrap_or_default();
    let (id, name) = identity(name, &engine_id);
    ContainerInfo {
        id,
        name,
        engine_id,
        state: ContainerState::from_engine(&status, exit_code),
        pid: state
            .pid
            .filter(|p| running && *p > 0)
            .and_then(|p| u32::try_from(p).ok()),
        started_at: parse_engine_time(state.started_at.as_deref()),
        stopped_at: parse_engine_time(state.finished_at.as_deref()),
        exit_code,
        image: requested_image(config.labels.as_ref().and_then(|l| l.get(labels::IMAGE)))
            .or(config.image),
        labels: config.labels.unwrap_or_default().into_iter().collect(),
        mounts: bind_mounts(inspected.mounts),
    }
}

pub fn info_from_summary(summary: ContainerSummary) -> ContainerInfo {
    let status = summary
        .state
        .map(|s| s.to_string())
        .unwrap_or_else(|| "created".to_string());
    let exit_code = summary.status.as_deref().and_then(exit_code_from_status);
    let name = summary
        .names
        .unwrap_or_default()
        .into_iter()
        .next()
        .map(|n| n.trim_start_matches('/').to_string())
        .unwrap_or_default();
    let engine_id = summary.id.unwrap_or_default();
    let labels: BTreeMap<String, String> = summary.labels.unwrap_or_default().into_iter().collect();
    let (id, name) = identity(name, &engine_id);
    ContainerInfo {
        id,
        name,
        engine_id,
        state: ContainerState::from_engine(&status, exit_code),
        pid: None,
        started_at: None,
        stopped_at: None,
        exit_code,
        image: requested_image(labels.get(labels::IMAGE)).or(summary.image),
        labels,
        mounts: bind_mounts(summary.mounts),
    }
}

/// The id callers use (the name, else the engine id) and the name if there is one.
fn identity(name: String, engine_id: &str) -> (String, Option<String>) {
    if name.is_empty() {
        (engine_id.to_string(), None)
    } else {
        (name.clone(), Some(name))
    }
}

/// The image as created (our label), which Podman reports renamed.
fn requested_image(label: Option<&String>) -> Option<String> {
    label.filter(|i| !i.is_empty()).cloned()
}

/// `Exited (7) 3 seconds ago` → 7.
fn exit_code_from_status(status: &str) -> Option<i64> {
    let rest = status.strip_prefix("Exited (")?;
    rest[..rest.find(')')?].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_read_from_list_status() {
        assert_eq!(exit_code_from_status("Exited (7) 3 seconds ago"), Some(7));
        assert_eq!(exit_code_from_status("Up 2 minutes"), None);
    }
}
