//! Reading typed fields out of a devcontainer.json object, with errors that name the file
//! and the field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, ErrorCode};

pub fn invalid(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Devcontainer,
        format!("{}: {why}", path.display()),
    )
}

pub fn string(map: &Map<String, Value>, key: &str, path: &Path) -> Result<Option<String>, Error> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(path, format_args!("{key} must be a string"))),
    }
}

/// Absent or null is false; anything but true or false is refused, naming `what`.
pub fn boolean(
    map: &Map<String, Value>,
    key: &str,
    what: &str,
    path: &Path,
) -> Result<bool, Error> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(invalid(path, format_args!("{what} must be true or false"))),
    }
}

/// A string, number or boolean as the text an environment variable holds.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

pub fn string_map(
    map: &Map<String, Value>,
    key: &str,
    path: &Path,
) -> Result<BTreeMap<String, String>, Error> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(k, v)| match scalar(v) {
                Some(text) => Ok((k.clone(), text)),
                None => Err(invalid(path, format_args!("{key}.{k} must be a string"))),
            })
            .collect(),
        Some(_) => Err(invalid(
            path,
            format_args!("{key} must be an object of strings"),
        )),
    }
}

/// Absent or null is `None`; anything but true or false is refused.
pub fn optional_bool(
    map: &Map<String, Value>,
    key: &str,
    path: &Path,
) -> Result<Option<bool>, Error> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(invalid(path, format_args!("{key} must be true or false"))),
    }
}

/// A string that must be one of `allowed`.
pub fn one_of(
    map: &Map<String, Value>,
    key: &str,
    allowed: &[&str],
    path: &Path,
) -> Result<Option<String>, Error> {
    match string(map, key, path)? {
        Some(s) if !allowed.contains(&s.as_str()) => Err(invalid(
            path,
            format_args!("{key} must be one of {}", allowed.join(", ")),
        )),
        other => Ok(other),
    }
}

/// An object of strings where null marks a variable to unset (`remoteEnv`).
pub fn nullable_string_map(
    map: &Map<String, Value>,
    key: &str,
    path: &Path,
) -> Result<BTreeMap<String, Option<String>>, Error> {
    let Some(Value::Object(entries)) = map.get(key) else {
        return string_map(map, key, path)
            .map(|m| m.into_iter().map(|(k, v)| (k, Some(v))).collect());
    };
    let mut out = BTreeMap::new();
    for (k, v) in entries {
        let value = match (v, scalar(v)) {
            (Value::Null, _) => None,
            (_, Some(text)) => Some(text),
            (_, None) => {
                return Err(invalid(
                    path,
                    format_args!("{key}.{k} must be a string or null"),
                ))
            }
        };
        out.insert(k.clone(), value);
    }
    Ok(out)
}

/// An array of strings (absent or null: empty).
pub fn string_list(map: &Map<String, Value>, key: &str, path: &Path) -> Result<Vec<String>, Error> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| invalid(path, format_args!("{key} must be an array of strings"))),
        Some(_) => Err(invalid(
            path,
            format_args!("{key} must be an array of strings"),
        )),
    }
}

/// `a/b/../c` → `a/c`, without touching the file system.
pub fn lexical(path: PathBuf) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}
