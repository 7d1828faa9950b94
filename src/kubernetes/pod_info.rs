//! What the library reports about a session Pod, read from the Pod's status: the session
//! container's state as the engines' four states, its times and exit code, and our labels
//! back from the annotations that carry them whole.

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};

use super::session_pod::CONTAINER;
use crate::runtime::{ContainerInfo, ContainerState};

pub fn info_from_pod(pod: &Pod) -> ContainerInfo {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let status = session_status(pod);
    let state = status.and_then(|s| s.state.as_ref());
    let running = state.and_then(|s| s.running.as_ref());
    let terminated = state.and_then(|s| s.terminated.as_ref());
    let exit_code = terminated.map(|t| i64::from(t.exit_code));
    let phase = pod
        .status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or("Pending");
    let state = match (phase, running.is_some(), exit_code) {
        (_, true, _) => ContainerState::Running,
        (_, false, Some(code)) => ContainerState::from_engine("exited", Some(code)),
        ("Failed", _, None) => ContainerState::Failed,
        ("Succeeded", _, None) => ContainerState::Stopped,
        _ => ContainerState::Created,
    };
    ContainerInfo {
        id: name.clone(),
        name: Some(name),
        engine_id: pod.metadata.uid.clone().unwrap_or_default(),
        state,
        pid: None,
        started_at: running
            .and_then(|r| r.started_at.as_ref())
            .or_else(|| terminated.and_then(|t| t.started_at.as_ref()))
            .map(|t| chrono_time(&t.0)),
        stopped_at: terminated
            .and_then(|t| t.finished_at.as_ref())
            .map(|t| chrono_time(&t.0)),
        exit_code,
        image: pod
            .spec
            .as_ref()
            .and_then(|s| s.containers.iter().find(|c| c.name == CONTAINER))
            .and_then(|c| c.image.clone()),
        labels: pod.metadata.annotations.clone().unwrap_or_default(),
        mounts: Vec::new(),
    }
}

/// The session container's status, once the kubelet reports it.
pub fn session_status(pod: &Pod) -> Option<&ContainerStatus> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|s| s.name == CONTAINER)
}

/// Why a Pod that is not running does not: the waiting reason and message of its container
/// (`ErrImageNeverPull`, `CreateContainerError`…), else the Pod's own.
pub fn waiting_reason(pod: &Pod) -> Option<(String, String)> {
    if let Some(waiting) = session_status(pod)
        .and_then(|s| s.state.as_ref())
        .and_then(|s| s.waiting.as_ref())
    {
        return Some((
            waiting.reason.clone().unwrap_or_default(),
            waiting.message.clone().unwrap_or_default(),
        ));
    }
    let status = pod.status.as_ref()?;
    let reason = status.reason.clone()?;
    Some((reason, status.message.clone().unwrap_or_default()))
}

fn chrono_time(time: &k8s_openapi::jiff::Timestamp) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(time.as_second(), time.subsec_nanosecond().max(0) as u32)
        .unwrap_or_default()
}

/// The session container's user as a spec (`uid`, `uid:gid`; empty for the image's), from
/// its security context.
pub fn configured_user(pod: &Pod) -> String {
    let context = pod
        .spec
        .as_ref()
        .and_then(|s| s.containers.iter().find(|c| c.name == CONTAINER))
        .and_then(|c| c.security_context.as_ref());
    match context.map(|c| (c.run_as_user, c.run_as_group)) {
        Some((Some(uid), Some(gid))) => format!("{uid}:{gid}"),
        Some((Some(uid), None)) => uid.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{
        ContainerState as KState, ContainerStateRunning, ContainerStateTerminated,
        ContainerStateWaiting, PodStatus,
    };

    fn pod_with(phase: &str, state: KState) -> Pod {
        Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some("p".into()),
                ..Default::default()
            },
            spec: None,
            status: Some(PodStatus {
                phase: Some(phase.into()),
                container_statuses: Some(vec![ContainerStatus {
                    name: CONTAINER.into(),
                    state: Some(state),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn states() {
        let running = pod_with(
            "Running",
            KState {
                running: Some(ContainerStateRunning::default()),
                ..Default::default()
            },
        );
        assert_eq!(info_from_pod(&running).state, ContainerState::Running);
        let exited = |code| {
            pod_with(
                "Failed",
                KState {
                    terminated: Some(ContainerStateTerminated {
                        exit_code: code,
                        ..Default::default()
                    }),
                    ..Default::default()
                },
            )
        };
        assert_eq!(info_from_pod(&exited(0)).state, ContainerState::Stopped);
        assert_eq!(info_from_pod(&exited(143)).state, ContainerState::Stopped);
        assert_eq!(info_from_pod(&exited(3)).state, ContainerState::Failed);
        assert_eq!(info_from_pod(&exited(3)).exit_code, Some(3));
        let waiting = pod_with(
            "Pending",
            KState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some("ErrImageNeverPull".into()),
                    message: Some("no image".into()),
                }),
                ..Default::default()
            },
        );
        assert_eq!(info_from_pod(&waiting).state, ContainerState::Created);
        assert_eq!(waiting_reason(&waiting).unwrap().0, "ErrImageNeverPull");
    }
}
