//! A feature's `devcontainer-feature.json`: its id, version, options with their defaults,
//! what it asks of the container (env, mounts, privileges, init, entrypoint), its
//! ordering (`dependsOn`, `installsAfter`), lifecycle commands and customizations. The
//! file is the feature author's: fields are type-checked, and the caller bounds the read.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::features::{parse_options, OptionValue};
use crate::error::{Error, ErrorCode, Result};

/// The most read of a devcontainer-feature.json.
pub const FEATURE_JSON_LIMIT: u64 = 256 * 1024;

const LIFECYCLE_KEYS: [&str; 5] = [
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
    "postAttachCommand",
];

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeatureMetadata {
    pub id: String,
    pub version: Option<String>,
    /// Option id → its default (options without one are absent).
    pub option_defaults: BTreeMap<String, OptionValue>,
    pub container_env: BTreeMap<String, String>,
    /// As written (strings or mount objects); judged by the metadata merge.
    pub mounts: Vec<Value>,
    pub cap_add: Vec<String>,
    pub security_opt: Vec<String>,
    pub privileged: Option<bool>,
    pub init: Option<bool>,
    pub entrypoint: Option<String>,
    pub installs_after: Vec<String>,
    /// Reference → options.
    pub depends_on: Vec<(String, BTreeMap<String, OptionValue>)>,
    /// Lifecycle command name → the command as written.
    pub lifecycle: BTreeMap<String, Value>,
    pub customizations: Option<Value>,
}

/// An option's environment variable name, as the spec makes it: non-word characters to
/// `_`, leading digits and underscores to one `_`, upper-cased.
pub fn option_env_name(id: &str) -> String {
    let replaced: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let rest = replaced.trim_start_matches(|c: char| c.is_ascii_digit() || c == '_');
    let name = if rest.len() == replaced.len() {
        replaced.clone()
    } else {
        format!("_{rest}")
    };
    name.to_ascii_uppercase()
}

fn bad(source: &str, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Devcontainer,
        format!("feature {source}: devcontainer-feature.json: {why}"),
    )
}

fn strings(map: &Map<String, Value>, key: &str, source: &str) -> Result<Vec<String>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| bad(source, format_args!("{key} must be an array of strings"))),
        Some(_) => Err(bad(
            source,
            format_args!("{key} must be an array of strings"),
        )),
    }
}

fn optional<'a, T>(
    map: &'a Map<String, Value>,
    key: &str,
    source: &str,
    what: &str,
    get: impl Fn(&'a Value) -> Option<T>,
) -> Result<Option<T>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => get(v)
            .map(Some)
            .ok_or_else(|| bad(source, format_args!("{key} must be {what}"))),
    }
}

fn option_defaults(
    map: &Map<String, Value>,
    source: &str,
) -> Result<BTreeMap<String, OptionValue>> {
    let mut defaults = BTreeMap::new();
    let Some(options) = optional(map, "options", source, "an object", Value::as_object)? else {
        return Ok(defaults);
    };
    for (id, option) in options {
        let Some(default) = option.as_object().and_then(|o| o.get("default")) else {
            continue;
        };
        let value = OptionValue::from_json(default).ok_or_else(|| {
            bad(
                source,
                format_args!("options.{id}.default must be a string or a boolean"),
            )
        })?;
        defaults.insert(id.clone(), value);
    }
    Ok(defaults)
}

/// Parses the file's text; `source` names the feature in errors.
pub fn parse_feature_metadata(text: &[u8], source: &str) -> Result<FeatureMetadata> {
    if text.len() as u64 > FEATURE_JSON_LIMIT {
        return Err(bad(
            source,
            format_args!("larger than {FEATURE_JSON_LIMIT} bytes"),
        ));
    }
    let value: Value = serde_json::from_slice(text).map_err(|e| bad(source, e))?;
    let Value::Object(map) = value else {
        return Err(bad(source, "the top level must be an object"));
    };
    let id = optional(&map, "id", source, "a string", Value::as_str)?
        .filter(|id| !id.is_empty())
        .ok_or_else(|| bad(source, "id is required"))?
        .to_string();
    let container_env = match optional(&map, "containerEnv", source, "an object", Value::as_object)?
    {
        None => BTreeMap::new(),
        Some(env) => env
            .iter()
            .map(|(k, v)| match v.as_str() {
                Some(s) => Ok((k.clone(), s.to_string())),
                None => Err(bad(
                    source,
                    format_args!("containerEnv.{k} must be a string"),
                )),
            })
            .collect::<Result<_>>()?,
    };
    let mut depends_on = Vec::new();
    if let Some(deps) = optional(&map, "dependsOn", source, "an object", Value::as_object)? {
        for (reference, options) in deps {
            let field = format!("dependsOn.{reference}");
            let parsed = parse_options(options, &field, std::path::Path::new(source))
                .map_err(|e| bad(source, e.message))?;
            depends_on.push((reference.clone(), parsed.unwrap_or_default()));
        }
    }
    let mut lifecycle = BTreeMap::new();
    for key in LIFECYCLE_KEYS {
        if let Some(command) = map.get(key).filter(|v| !v.is_null()) {
            super::lifecycle::parse_lifecycle(command, key).map_err(|e| bad(source, e.message))?;
            lifecycle.insert(key.to_string(), command.clone());
        }
    }
    Ok(FeatureMetadata {
        id,
        version: optional(&map, "version", source, "a string", Value::as_str)?.map(str::to_string),
        option_defaults: option_defaults(&map, source)?,
        container_env,
        mounts: optional(&map, "mounts", source, "an array", Value::as_array)?
            .cloned()
            .unwrap_or_default(),
        cap_add: strings(&map, "capAdd", source)?,
        security_opt: strings(&map, "securityOpt", source)?,
        privileged: optional(&map, "privileged", source, "a boolean", Value::as_bool)?,
        init: optional(&map, "init", source, "a boolean", Value::as_bool)?,
        entrypoint: optional(&map, "entrypoint", source, "a string", Value::as_str)?
            .map(str::to_string),
        installs_after: strings(&map, "installsAfter", source)?,
        depends_on,
        lifecycle,
        customizations: map.get("customizations").filter(|v| !v.is_null()).cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_names_follow_the_spec() {
        assert_eq!(option_env_name("version"), "VERSION");
        assert_eq!(option_env_name("install-tools.now"), "INSTALL_TOOLS_NOW");
        assert_eq!(option_env_name("1st_option"), "_ST_OPTION");
        assert_eq!(option_env_name("__x"), "_X");
    }

    #[test]
    fn every_field_is_read_and_typed() {
        let text = br#"{ "id": "hello", "version": "1.0.0",
            "options": { "greeting": { "type": "string", "default": "hi" }, "loud": { "type": "boolean", "default": false }, "free": { "type": "string" } },
            "containerEnv": { "PATH": "/opt/hello:${PATH}" }, "mounts": [{ "source": "v", "target": "/v", "type": "volume" }],
            "capAdd": ["SYS_PTRACE"], "securityOpt": ["seccomp=unconfined"], "privileged": true, "init": true,
            "entrypoint": "/usr/local/bin/start.sh", "installsAfter": ["a.example/ns/base"],
            "dependsOn": { "a.example/ns/common:1": { "x": "y" } },
            "postCreateCommand": "hello --check", "customizations": { "vscode": {} } }"#;
        let m = parse_feature_metadata(text, "./hello").unwrap();
        assert_eq!(m.id, "hello");
        assert_eq!(
            m.option_defaults["greeting"],
            OptionValue::String("hi".into())
        );
        assert_eq!(m.option_defaults["loud"], OptionValue::Bool(false));
        assert!(!m.option_defaults.contains_key("free"));
        assert_eq!(m.container_env["PATH"], "/opt/hello:${PATH}");
        assert_eq!((m.privileged, m.init), (Some(true), Some(true)));
        assert_eq!(m.depends_on[0].0, "a.example/ns/common:1");
        assert_eq!(m.lifecycle["postCreateCommand"], "hello --check");
        assert_eq!(m.installs_after, ["a.example/ns/base"]);
    }

    #[test]
    fn wrong_types_and_a_missing_id_are_refused() {
        for text in [
            r#"{ "version": "1" }"#,
            r#"{ "id": "x", "capAdd": "SYS_ADMIN" }"#,
            r#"{ "id": "x", "containerEnv": { "A": 1 } }"#,
            r#"{ "id": "x", "privileged": "yes" }"#,
            r#"[]"#,
        ] {
            let err = parse_feature_metadata(text.as_bytes(), "f").unwrap_err();
            assert_eq!(err.code, ErrorCode::Devcontainer, "{text}");
        }
    }
}
