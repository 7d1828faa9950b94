//! devcontainer.json's `build` (`dockerfile`, `context`, `args`, `target`), and the older
//! top-level `dockerFile` and `context`. Paths are relative to the folder of
//! devcontainer.json; without `context`, the build runs in the Dockerfile's folder, as the
//! reference CLI does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::fields::{invalid, lexical, string, string_map};
use crate::error::Result;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildConfig {
    pub dockerfile: PathBuf,
    pub context: PathBuf,
    pub args: BTreeMap<String, String>,
    pub target: Option<String>,
}

pub fn parse_build(
    map: &Map<String, Value>,
    dir: &Path,
    path: &Path,
) -> Result<Option<BuildConfig>> {
    let empty = Map::new();
    let b = match map.get("build") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(b)) => b,
        Some(_) => return Err(invalid(path, "build must be an object")),
    };
    let dockerfile = match string(b, "dockerfile", path)? {
        Some(file) => file,
        None => match string(map, "dockerFile", path)? {
            Some(file) => file,
            None if b.is_empty() => return Ok(None),
            None => return Err(invalid(path, "build.dockerfile is required")),
        },
    };
    let dockerfile = lexical(dir.join(dockerfile));
    let context = match string(b, "context", path)? {
        Some(context) => lexical(dir.join(context)),
        None => match string(map, "context", path)? {
            Some(context) => lexical(dir.join(context)),
            None => dockerfile.parent().unwrap_or(dir).to_path_buf(),
        },
    };
    Ok(Some(BuildConfig {
        dockerfile,
        context,
        args: string_map(b, "args", path)?,
        target: string(b, "target", path)?,
    }))
}
