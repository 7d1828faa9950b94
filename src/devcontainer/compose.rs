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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn parse(text: &str) -> Result<Option<ComposeConfig>> {
        let Value::Object(map) = serde_json::from_str(text).unwrap() else {
            panic!("not an object");
        };
        parse_compose(&map, Path::new("/p/.devcontainer/devcontainer.json"))
    }

    #[test]
    fn one_file_or_several_with_service_and_run_services() {
        let several = parse(
            r#"{ "dockerComposeFile": ["../compose.yml", "more.yml"], "service": "app", "runServices": ["db"] }"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(several.files, ["../compose.yml", "more.yml"]);
        assert_eq!(several.service.as_deref(), Some("app"));
        assert_eq!(several.run_services, ["db"]);
        let one = parse(r#"{ "dockerComposeFile": "c.yml" }"#)
            .unwrap()
            .unwrap();
        assert_eq!(one.files, ["c.yml"]);
        assert_eq!(parse(r#"{ "service": "app" }"#).unwrap(), None);
    }

    #[test]
    fn wrong_types_are_refused() {
        for text in [
            r#"{ "dockerComposeFile": 1 }"#,
            r#"{ "dockerComposeFile": [1] }"#,
            r#"{ "dockerComposeFile": "c.yml", "service": 2 }"#,
        ] {
            assert_eq!(
                parse(text).unwrap_err().code,
                ErrorCode::Devcontainer,
                "{text}"
            );
        }
    }
}
