//! `container inspect` / `container list --format json` output, in both shapes the CLI has
//! used: 0.x `{status, configuration}` and 1.x `{id, configuration, status: {state}}`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, ErrorCode, Result};
use crate::runtime::{ContainerInfo, ContainerMount, ContainerState};

#[derive(Debug, Clone, PartialEq)]
pub struct AppleContainer {
    pub info: ContainerInfo,
    pub mounts: Vec<ContainerMount>,
}

fn text(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(str::to_string)
}

fn state_of(entry: &Value) -> (ContainerState, Option<i64>) {
    let status = &entry["status"];
    let word = text(Some(status))
        .or_else(|| text(status.get("state")))
        .or_else(|| text(status.get("status")))
        .unwrap_or_default()
        .to_ascii_lowercase();
    let exit_code = status.get("exitCode").and_then(Value::as_i64);
    let state = match word.as_str() {
        "running" | "stopping" => ContainerState::Running,
        "created" | "creating" | "unknown" | "" => ContainerState::Created,
        // `container stop` ends with SIGTERM (143) or SIGKILL (137): a stop, not a failure.
        _ => ContainerState::from_engine("exited", exit_code),
    };
    (state, exit_code)
}

fn mounts_of(config: &Value) -> Vec<ContainerMount> {
    config["mounts"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|m| {
                    let options: Vec<&str> = m["options"]
                        .as_array()
                        .map(|o| o.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    Some(ContainerMount::bind(
                        &text(m.get("source"))?,
                        &text(m.get("destination")).or_else(|| text(m.get("target")))?,
                        options.iter().any(|o| *o == "ro" || *o == "readonly")
                            || m["readonly"].as_bool().unwrap_or(false),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

pub fn parse_entry(entry: &Value) -> Option<AppleContainer> {
    let config = &entry["configuration"];
    let id = text(entry.get("id")).or_else(|| text(config.get("id")))?;
    let (state, exit_code) = state_of(entry);
    let labels: BTreeMap<String, String> = config["labels"]
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let image = text(config["image"].get("reference")).or_else(|| text(config.get("image")));
    let mounts = mounts_of(config);
    Some(AppleContainer {
        info: ContainerInfo {
            id: id.clone(),
            name: Some(id.clone()),
            engine_id: id,
            state,
            pid: None,
            started_at: None,
            stopped_at: None,
            exit_code: (state != ContainerState::Running)
                .then_some(exit_code)
                .flatten(),
            image,
            labels,
            mounts: mounts.clone(),
        },
        mounts,
    })
}

/// Every container in an inspect or list answer (an array, or a single object).
pub fn parse(output: &str, what: &str) -> Result<Vec<AppleContainer>> {
    let value: Value = serde_json::from_str(output.trim()).map_err(|e| {
        Error::new(
            ErrorCode::EngineError,
            format!("{what}: the container CLI printed JSON this library cannot read: {e}"),
        )
    })?;
    let entries = match value {
        Value::Array(list) => list,
        single => vec![single],
    };
    Ok(entries.iter().filter_map(parse_entry).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 0.x shape: `status` a string, the id inside `configuration`.
    const INSPECT_0X: &str = r#"[{"status":"running","configuration":{"id":"ci-1a2b3c4d",
      "image":{"reference":"registry.example/library/debian:bookworm","descriptor":{}},
      "labels":{"dev.container-isolation.managed":"true","dev.container-isolation.session":"s1"},
      "mounts":[{"type":{"virtiofs":{}},"source":"/Users/me/p","destination":"/workspace","options":[]},
                {"type":{"virtiofs":{}},"source":"/Users/me/c","destination":"/cache","options":["ro"]}],
      "initProcess":{"executable":"/bin/sh","arguments":["-c","sleep"]}}}]"#;

    /// The 1.x shape: the id at the top, `status` an object with the state.
    const INSPECT_1X: &str = r#"[{"id":"ci-9f8e7d6c","status":{"state":"stopped","exitCode":143},
      "configuration":{"id":"ci-9f8e7d6c","image":{"reference":"debian:bookworm"},
      "labels":{"dev.container-isolation.managed":"true"},"mounts":[]}}]"#;

    #[test]
    fn reads_the_0x_shape() {
        let all = parse(INSPECT_0X, "inspect").unwrap();
        let c = &all[0];
        assert_eq!(c.info.id, "ci-1a2b3c4d");
        assert_eq!(c.info.state, ContainerState::Running);
        assert_eq!(
            c.info.image.as_deref(),
            Some("registry.example/library/debian:bookworm")
        );
        assert_eq!(c.info.labels["dev.container-isolation.session"], "s1");
        assert_eq!(c.mounts.len(), 2);
        assert!(!c.mounts[0].readonly && c.mounts[1].readonly);
        assert_eq!(c.mounts[1].target, "/cache");
    }

    #[test]
    fn reads_the_1x_shape_and_143_is_a_stop() {
        let all = parse(INSPECT_1X, "inspect").unwrap();
        assert_eq!(all[0].info.id, "ci-9f8e7d6c");
        assert_eq!(all[0].info.state, ContainerState::Stopped);
        assert_eq!(all[0].info.exit_code, Some(143));
    }

    #[test]
    fn unreadable_output_is_a_clear_error() {
        let err = parse("not json", "inspect of x").unwrap_err();
        assert_eq!(err.code, ErrorCode::EngineError);
        assert!(err.message.contains("inspect of x"));
    }
}
