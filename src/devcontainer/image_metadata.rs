//! An image's `devcontainer.metadata` label: a JSON array of config fragments (or one
//! object), written by whoever built the image — untrusted, so size-bounded, typed as
//! strictly as devcontainer.json, and judged by the caller like the config itself.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::fields::{boolean, invalid, nullable_string_map, one_of, optional_bool, string};
use super::fields::{string_list, string_map};
use super::lifecycle::{parse_lifecycle, LifecycleCommand};
use super::mount_spec::{parse_mount, MountSpec};
use crate::error::Result;

pub const METADATA_LABEL: &str = "devcontainer.metadata";

/// The largest label read; a larger one is refused.
pub const METADATA_LIMIT: usize = 256 * 1024;

/// The most entries (one per feature, plus the config's) an image may carry.
const ENTRY_LIMIT: usize = 128;

pub const USER_ENV_PROBES: &[&str] = &[
    "none",
    "loginShell",
    "loginInteractiveShell",
    "interactiveShell",
];
pub const SHUTDOWN_ACTIONS: &[&str] = &["none", "stopContainer", "stopCompose"];

/// The mergeable fields of one config fragment (an image's entry or devcontainer.json).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataEntry {
    pub id: Option<String>,
    pub remote_user: Option<String>,
    pub container_user: Option<String>,
    pub container_env: BTreeMap<String, String>,
    pub remote_env: BTreeMap<String, Option<String>>,
    pub mounts: Vec<MountSpec>,
    pub privileged: bool,
    pub init: Option<bool>,
    pub cap_add: Vec<String>,
    pub security_opt: Vec<String>,
    pub entrypoint: Option<String>,
    pub override_command: Option<bool>,
    pub shutdown_action: Option<String>,
    pub update_remote_user_uid: Option<bool>,
    pub user_env_probe: Option<String>,
    pub on_create: Option<LifecycleCommand>,
    pub update_content: Option<LifecycleCommand>,
    pub post_create: Option<LifecycleCommand>,
    pub post_start: Option<LifecycleCommand>,
    pub post_attach: Option<LifecycleCommand>,
}

/// The fields `MetadataEntry` holds, read from one object; `path` names it in errors.
pub fn parse_entry(map: &Map<String, Value>, path: &Path) -> Result<MetadataEntry> {
    let lifecycle = |key: &str| -> Result<Option<LifecycleCommand>> {
        map.get(key)
            .filter(|v| !v.is_null())
            .map(|v| parse_lifecycle(v, key).map_err(|e| invalid(path, e.message)))
            .transpose()
    };
    let mut mounts = Vec::new();
    if let Some(value) = map.get("mounts").filter(|v| !v.is_null()) {
        let Value::Array(items) = value else {
            return Err(invalid(path, "mounts must be an array"));
        };
        for (i, item) in items.iter().enumerate() {
            mounts.push(parse_mount(item, &format!("mounts[{i}]"), path)?);
        }
    }
    Ok(MetadataEntry {
        id: string(map, "id", path)?,
        remote_user: string(map, "remoteUser", path)?,
        container_user: string(map, "containerUser", path)?,
        container_env: string_map(map, "containerEnv", path)?,
        remote_env: nullable_string_map(map, "remoteEnv", path)?,
        mounts,
        privileged: boolean(map, "privileged", "privileged", path)?,
        init: optional_bool(map, "init", path)?,
        cap_add: string_list(map, "capAdd", path)?,
        security_opt: string_list(map, "securityOpt", path)?,
        entrypoint: string(map, "entrypoint", path)?,
        override_command: optional_bool(map, "overrideCommand", path)?,
        shutdown_action: one_of(map, "shutdownAction", SHUTDOWN_ACTIONS, path)?,
        update_remote_user_uid: optional_bool(map, "updateRemoteUserUID", path)?,
        user_env_probe: one_of(map, "userEnvProbe", USER_ENV_PROBES, path)?,
        on_create: lifecycle("onCreateCommand")?,
        update_content: lifecycle("updateContentCommand")?,
        post_create: lifecycle("postCreateCommand")?,
        post_start: lifecycle("postStartCommand")?,
        post_attach: lifecycle("postAttachCommand")?,
    })
}

/// The entries of an image's label, in order; `image` names it in errors.
pub fn parse_image_metadata(image: &str, label: &str) -> Result<Vec<MetadataEntry>> {
    let what = format!("image {image} label {METADATA_LABEL}");
    let path = Path::new(&what);
    if label.len() > METADATA_LIMIT {
        return Err(invalid(
            path,
            format_args!("larger than {METADATA_LIMIT} bytes, the most read"),
        ));
    }
    let value: Value =
        serde_json::from_str(label).map_err(|e| invalid(path, format_args!("not JSON: {e}")))?;
    let objects = match value {
        Value::Array(items) => items,
        object @ Value::Object(_) => vec![object],
        _ => return Err(invalid(path, "must be an array of objects or an object")),
    };
    if objects.len() > ENTRY_LIMIT {
        return Err(invalid(
            path,
            format_args!("more than {ENTRY_LIMIT} entries"),
        ));
    }
    objects
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let entry = format!("{what}[{i}]");
            match item {
                Value::Object(map) => parse_entry(map, Path::new(&entry)),
                _ => Err(invalid(Path::new(&entry), "must be an object")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn an_array_or_one_object_is_read() {
        let entries = parse_image_metadata(
            "i",
            r#"[{"id":"f","remoteUser":"agent","remoteEnv":{"X":null,"Y":"1"}},{"postCreateCommand":"true","init":true}]"#,
        )
        .unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].remote_user.as_deref(), Some("agent"));
        assert_eq!(entries[0].remote_env["X"], None);
        assert_eq!(entries[1].init, Some(true));
        assert!(entries[1].post_create.is_some());
        let one = parse_image_metadata("i", r#"{"capAdd":["SYS_PTRACE"]}"#).unwrap();
        assert_eq!(one[0].cap_add, ["SYS_PTRACE"]);
    }

    #[test]
    fn bad_or_oversized_labels_are_refused() {
        let big = format!("[{{\"id\":\"{}\"}}]", "x".repeat(METADATA_LIMIT));
        for label in [
            "nope",
            "42",
            "[1]",
            r#"[{"privileged":"yes"}]"#,
            r#"[{"userEnvProbe":"bash"}]"#,
            big.as_str(),
        ] {
            let err = parse_image_metadata("i", label).unwrap_err();
            assert_eq!(err.code, ErrorCode::Devcontainer, "{label:.40}");
            assert!(err.message.contains(METADATA_LABEL));
        }
    }
}
