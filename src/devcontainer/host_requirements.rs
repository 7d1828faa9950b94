//! devcontainer.json `hostRequirements` (`cpus`, `memory`, `storage`, `gpu`): read into
//! numbers (sizes like `"4gb"` in bytes), and compared with what a session gets — its
//! limits, else the engine's capacity — into warnings. Storage and GPUs are neither
//! checked nor provided, which the read itself warns about. A value that does not parse is
//! a warning, not an error: the field only advises.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::byte_size::parse_bytes;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostRequirements {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u64>,
    /// Bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<i64>,
    /// Bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<i64>,
    /// As written: `true`, `"optional"` or `{ cores, memory }` (`false` is left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<Value>,
}

/// What a session has: its limits where set, else the engine's capacity where known.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Available {
    pub cpus: Option<f64>,
    /// Whether `cpus` is the session's limit (else the engine's count).
    pub cpus_limited: bool,
    pub memory: Option<i64>,
    pub memory_limited: bool,
}

fn size(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().filter(|n| *n >= 0),
        Value::String(text) => parse_bytes(text, "hostRequirements").ok(),
        _ => None,
    }
}

/// `hostRequirements` read, and a warning for each part that is not acted on or does not
/// parse. `None` when the file has none.
pub fn parse_host_requirements(
    map: &Map<String, Value>,
) -> (Option<HostRequirements>, Vec<String>) {
    let Some(Value::Object(req)) = map.get("hostRequirements") else {
        let warned = map.get("hostRequirements").filter(|v| !v.is_null());
        let warnings = warned
            .map(|_| vec!["hostRequirements must be an object and was ignored".to_string()])
            .unwrap_or_default();
        return (None, warnings);
    };
    let mut out = HostRequirements::default();
    let mut warnings = Vec::new();
    let mut unreadable = |key: &str| {
        warnings.push(format!(
            "hostRequirements.{key} does not parse and was ignored"
        ))
    };
    match req.get("cpus") {
        None | Some(Value::Null) => {}
        Some(v) => match v.as_u64() {
            Some(n) => out.cpus = Some(n),
            None => unreadable("cpus"),
        },
    }
    for (key, slot) in [("memory", &mut out.memory), ("storage", &mut out.storage)] {
        match req.get(key) {
            None | Some(Value::Null) => {}
            Some(v) => match size(v) {
                Some(n) => *slot = Some(n),
                None => unreadable(key),
            },
        }
    }
    out.gpu = req
        .get("gpu")
        .filter(|v| !v.is_null() && **v != Value::Bool(false))
        .cloned();
    if let Some(storage) = out.storage {
        warnings.push(format!(
            "hostRequirements.storage {} is not checked: a session's disk is the engine's",
            shown(storage)
        ));
    }
    if let Some(gpu) = &out.gpu {
        warnings.push(format!(
            "hostRequirements.gpu {gpu} is not provided: sessions get no GPU"
        ));
    }
    (Some(out), warnings)
}

/// `bytes` with its size in GiB or MiB for reading.
fn shown(bytes: i64) -> String {
    let (unit, div) = if bytes >= 1 << 30 {
        ("GiB", (1u64 << 30) as f64)
    } else {
        ("MiB", (1u64 << 20) as f64)
    };
    let value = format!("{:.2}", bytes as f64 / div);
    let value = value.trim_end_matches('0').trim_end_matches('.');
    format!("{bytes} bytes ({value} {unit})")
}

impl HostRequirements {
    /// A warning for `cpus` and `memory` each when the session has less than asked.
    pub fn unmet(&self, available: &Available) -> Vec<String> {
        let mut warnings = Vec::new();
        let whose = |limited: bool| {
            if limited {
                "the session is limited to"
            } else {
                "the engine has"
            }
        };
        if let (Some(want), Some(have)) = (self.cpus, available.cpus) {
            if (want as f64) > have {
                warnings.push(format!(
                    "hostRequirements.cpus {want} does not fit: {} {have} CPUs",
                    whose(available.cpus_limited)
                ));
            }
        }
        if let (Some(want), Some(have)) = (self.memory, available.memory) {
            if want > have {
                warnings.push(format!(
                    "hostRequirements.memory {} does not fit: {} {}",
                    shown(want),
                    whose(available.memory_limited),
                    shown(have)
                ));
            }
        }
        warnings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Option<HostRequirements>, Vec<String>) {
        let Value::Object(map) = serde_json::from_str(text).unwrap() else {
            panic!("not an object");
        };
        parse_host_requirements(&map)
    }

    #[test]
    fn sizes_read_as_bytes_and_storage_and_gpu_are_warned_about() {
        let (req, warnings) = read(
            r#"{ "hostRequirements": { "cpus": 4, "memory": "8gb", "storage": "32GB", "gpu": "optional" } }"#,
        );
        let req = req.unwrap();
        assert_eq!(req.cpus, Some(4));
        assert_eq!(req.memory, Some(8 << 30));
        assert_eq!(req.storage, Some(32 << 30));
        assert_eq!(req.gpu, Some(Value::String("optional".into())));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("hostRequirements.storage 34359738368 bytes (32 GiB)"));
        assert!(warnings[1].starts_with("hostRequirements.gpu \"optional\" is not provided"));
        let (req, warnings) =
            read(r#"{ "hostRequirements": { "memory": "512mb", "gpu": false } }"#);
        assert_eq!(req.unwrap().memory, Some(512 << 20));
        assert!(warnings.is_empty());
    }

    #[test]
    fn what_does_not_parse_is_a_warning() {
        let (req, warnings) = read(r#"{ "hostRequirements": { "cpus": 1.5, "memory": "lots" } }"#);
        assert_eq!(req.unwrap(), HostRequirements::default());
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(read("{}").0.is_none());
        assert_eq!(read(r#"{ "hostRequirements": 3 }"#).1.len(), 1);
    }

    #[test]
    fn unmet_names_the_limit_or_the_engine() {
        let req = HostRequirements {
            cpus: Some(4),
            memory: Some(8 << 30),
            ..Default::default()
        };
        let limited = Available {
            cpus: Some(1.5),
            cpus_limited: true,
            memory: Some(512 << 20),
            memory_limited: true,
        };
        let warnings = req.unmet(&limited);
        assert_eq!(
            warnings,
            [
                "hostRequirements.cpus 4 does not fit: the session is limited to 1.5 CPUs",
                "hostRequirements.memory 8589934592 bytes (8 GiB) does not fit: the session is limited to 536870912 bytes (512 MiB)",
            ]
        );
        let engine = Available {
            cpus: Some(2.0),
            memory: Some(16 << 30),
            ..Default::default()
        };
        assert_eq!(
            req.unmet(&engine),
            ["hostRequirements.cpus 4 does not fit: the engine has 2 CPUs"]
        );
        assert!(req.unmet(&Available::default()).is_empty());
    }
}
