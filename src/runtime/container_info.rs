//! What the library reports about a container, read from the engine's inspect/list answers.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::container_mount::ContainerMount;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerState {
    Created,
    Running,
    Stopped,
    Failed,
}

impl ContainerState {
    pub fn as_str(self) -> &'static str {
        match self {
            ContainerState::Created => "created",
            ContainerState::Running => "running",
            ContainerState::Stopped => "stopped",
            ContainerState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<ContainerState> {
        [
            ContainerState::Created,
            ContainerState::Running,
            ContainerState::Stopped,
            ContainerState::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }

    /// Engine status words (Docker and Podman) to our four states. An exit by SIGTERM (143)
    /// or SIGKILL (137) after a stop is an orderly stop, not a failure.
    pub fn from_engine(status: &str, exit_code: Option<i64>) -> ContainerState {
        match status.to_ascii_lowercase().as_str() {
            "created" | "configured" | "initialized" => ContainerState::Created,
            "running" | "paused" | "restarting" | "stopping" => ContainerState::Running,
            "dead" | "removing" => ContainerState::Failed,
            _ => match exit_code {
                None | Some(0) | Some(143) | Some(137) => ContainerState::Stopped,
                Some(_) => ContainerState::Failed,
            },
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerInfo {
    /// The container's name, which every call of this library accepts as its id.
    pub id: String,
    pub name: Option<String>,
    pub engine_id: String,
    pub state: ContainerState,
    pub pid: Option<u32>,
    pub started_at: Option<DateTime<Utc>>,
    pub stopped_at: Option<DateTime<Utc>>,
    pub exit_code: Option<i64>,
    pub image: Option<String>,
    pub labels: BTreeMap<String, String>,
    /// Bind mounts, without the session agent's (nor its line folder).
    pub mounts: Vec<ContainerMount>,
}

/// Engines report "never" as the zero time (`0001-01-01T00:00:00Z`).
pub fn parse_engine_time(text: Option<&str>) -> Option<DateTime<Utc>> {
    let parsed = DateTime::parse_from_rfc3339(text?)
        .ok()?
        .with_timezone(&Utc);
    (parsed.timestamp() > 0).then_some(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exits_by_stop_signals_are_stopped() {
        assert_eq!(
            ContainerState::from_engine("exited", Some(143)),
            ContainerState::Stopped
        );
        assert_eq!(
            ContainerState::from_engine("exited", Some(137)),
            ContainerState::Stopped
        );
        assert_eq!(
            ContainerState::from_engine("exited", Some(7)),
            ContainerState::Failed
        );
        assert_eq!(
            ContainerState::from_engine("created", None),
            ContainerState::Created
        );
    }

    #[test]
    fn zero_time_is_none_and_offsets_are_honoured() {
        assert_eq!(parse_engine_time(Some("0001-01-01T00:00:00Z")), None);
        let t = parse_engine_time(Some("2026-11-22T18:00:00.123456789+01:00")).unwrap();
        assert_eq!(t.timestamp_millis(), 1_795_366_800_123);
    }
}
