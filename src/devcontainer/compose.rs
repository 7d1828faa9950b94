//! A Docker Compose config (`dockerComposeFile`, `service`, `runServices`): read so that a
//! host can see what the project asks for, never run (a session is one container; a
//! session's settings refuse it).

use std::path::Path;

use serde_json::{Map, Value};

use super::fields::{invalid, string, string_list};
use crate::error::Result;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ComposeConfig {
    /// `dockerComposeFile`, one or more, as written (relative to devcontainer.json's folder).
    pub files: Vec<String>,
    pub service: Option<String>,
    pub run_services: Vec<String>,
}

/// `None` without `dockerComposeFile`.
pub fn parse_compose(map: &Map<String, Value>, path: &Path) -> Result<Option<ComposeConfig>> {
    let files = match map.get("dockerComposeFile") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(file)) => vec![file.clone()],
        Some(Value::Array(_)) => string_list(map, "dockerComposeFile", path)?,
        Some(_) => {
            return Err(invalid(
                path,
                "dockerComposeFile must be a string or an array of strings",
            ))
        }
    };
    Ok(Some(ComposeConfig {
        files,
        service: string(map, "service", path)?,
        run_services: string_list(map, "runServices", path)?,
    }))
}
