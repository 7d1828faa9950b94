//! devcontainer.json's `features` (a reference → its options) and
//! `overrideFeatureInstallOrder`, read without fetching anything. A reference is a local
//! folder (`./…`, relative to devcontainer.json's folder) or an OCI artifact
//! (`<registry>/<namespace>/<id>[:tag|@sha256:…]`); the deprecated forms are read as
//! unsupported (a session refuses them).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::fields::{invalid, lexical, string_list};
use super::oci_reference::{parse_oci_ref, OciRef};
use crate::error::Result;

/// An option's value as devcontainer.json and devcontainer-feature.json write it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionValue {
    Bool(bool),
    String(String),
}

impl OptionValue {
    pub fn as_env(&self) -> String {
        match self {
            OptionValue::Bool(b) => b.to_string(),
            OptionValue::String(s) => s.clone(),
        }
    }

    /// A JSON string, boolean or number (as its text); anything else is `None`.
    pub fn from_json(value: &Value) -> Option<OptionValue> {
        match value {
            Value::Bool(b) => Some(OptionValue::Bool(*b)),
            Value::String(s) => Some(OptionValue::String(s.clone())),
            Value::Number(n) => Some(OptionValue::String(n.to_string())),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum FeatureSource {
    /// A folder, lexically resolved (not yet checked against the project).
    Local {
        path: PathBuf,
    },
    Oci(OciRef),
    /// A form this library does not install (a deprecated one): read with a warning, and
    /// refused by a session.
    Unsupported {
        why: String,
    },
}

impl FeatureRequest {
    /// Why this feature cannot be installed, if so.
    pub fn unsupported(&self) -> Option<&str> {
        match &self.source {
            FeatureSource::Unsupported { why } => Some(why),
            _ => None,
        }
    }
}

/// One entry of `features`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeatureRequest {
    /// The reference as written.
    pub reference: String,
    pub source: FeatureSource,
    pub options: BTreeMap<String, OptionValue>,
}

/// Where `reference` points, or why it is refused.
pub fn parse_source(
    reference: &str,
    config_dir: &Path,
) -> std::result::Result<FeatureSource, String> {
    if reference.starts_with("./") || reference.starts_with("../") {
        return Ok(FeatureSource::Local {
            path: lexical(config_dir.join(reference)),
        });
    }
    if reference.starts_with("https://") || reference.starts_with("http://") {
        return Err(format!(
            "'{reference}': features from a tarball URL are deprecated and not supported; publish it as an OCI artifact (<registry>/<namespace>/<id>:<tag>) or copy it into .devcontainer/ as a local feature"
        ));
    }
    if !reference.contains('/') {
        return Err(format!(
            "'{reference}': a bare feature id is a deprecated form and not supported; use its OCI reference <registry>/<namespace>/{reference}:<tag>"
        ));
    }
    parse_oci_ref(reference).map(FeatureSource::Oci).ok_or_else(|| {
        format!(
            "'{reference}' is not a feature reference: a GitHub-release form (<owner>/<repo>/<id>[@version]) is deprecated and not supported; use an OCI reference <registry>/<namespace>/<id>[:tag|@sha256:…] or a local ./path"
        )
    })
}

/// A feature's options as devcontainer.json writes them: an object, a string (its
/// `version`) or `true` (defaults). `false` is `None`: the feature is not installed.
pub fn parse_options(
    value: &Value,
    field: &str,
    path: &Path,
) -> Result<Option<BTreeMap<String, OptionValue>>> {
    match value {
        Value::Bool(false) => Ok(None),
        Value::Bool(true) | Value::Null => Ok(Some(BTreeMap::new())),
        Value::String(v) => Ok(Some(BTreeMap::from([(
            "version".to_string(),
            OptionValue::String(v.clone()),
        )]))),
        Value::Object(entries) => entries
            .iter()
            .map(|(k, v)| {
                OptionValue::from_json(v)
                    .map(|v| (k.clone(), v))
                    .ok_or_else(|| {
                        invalid(
                            path,
                            format_args!("{field}.{k} must be a string, a number or a boolean"),
                        )
                    })
            })
            .collect::<Result<_>>()
            .map(Some),
        _ => Err(invalid(
            path,
            format_args!("{field} must be an object of options, a version string or a boolean"),
        )),
    }
}

/// `features` and `overrideFeatureInstallOrder` of the file at `path`.
pub fn parse_features(
    map: &Map<String, Value>,
    path: &Path,
) -> Result<(Vec<FeatureRequest>, Vec<String>)> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut requests = Vec::new();
    match map.get("features") {
        None | Some(Value::Null) => {}
        Some(Value::Object(entries)) => {
            for (reference, value) in entries {
                let field = format!("features.{reference}");
                let Some(options) = parse_options(value, &field, path)? else {
                    continue;
                };
                let source = parse_source(reference, dir)
                    .unwrap_or_else(|why| FeatureSource::Unsupported { why });
                requests.push(FeatureRequest {
                    reference: reference.clone(),
                    source,
                    options,
                });
            }
        }
        Some(_) => return Err(invalid(path, "features must be an object")),
    }
    let order = string_list(map, "overrideFeatureInstallOrder", path)?;
    Ok((requests, order))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deprecated_forms_are_refused_saying_so() {
        let dir = Path::new("/p/.devcontainer");
        for (reference, says) in [
            ("node", "bare feature id is a deprecated form"),
            ("owner/repo/go@v1", "GitHub-release form"),
            ("https://host.example/f.tgz", "tarball URL are deprecated"),
        ] {
            let err = parse_source(reference, dir).unwrap_err();
            assert!(err.contains(says), "{reference}: {err}");
        }
        assert_eq!(
            parse_source("./features/hello", dir).unwrap(),
            FeatureSource::Local {
                path: PathBuf::from("/p/.devcontainer/features/hello")
            }
        );
    }

    #[test]
    fn options_are_an_object_a_version_or_a_boolean() {
        let path = Path::new("/p/devcontainer.json");
        let map: Map<String, Value> = serde_json::from_str(
            r#"{ "features": { "./a": { "greeting": "hi", "n": 3, "on": true }, "./b": "1.2", "./c": true, "./d": false },
                 "overrideFeatureInstallOrder": ["./c"] }"#,
        )
        .unwrap();
        let (features, order) = parse_features(&map, path).unwrap();
        let refs: Vec<_> = features.iter().map(|f| f.reference.as_str()).collect();
        assert_eq!(refs, ["./a", "./b", "./c"]);
        assert_eq!(features[0].options["n"], OptionValue::String("3".into()));
        assert_eq!(features[0].options["on"], OptionValue::Bool(true));
        assert_eq!(
            features[1].options["version"],
            OptionValue::String("1.2".into())
        );
        assert!(features[2].options.is_empty());
        assert_eq!(order, ["./c"]);
        let bad: Map<String, Value> =
            serde_json::from_str(r#"{ "features": { "./a": { "o": [1] } } }"#).unwrap();
        assert!(parse_features(&bad, path).is_err());
    }
}
