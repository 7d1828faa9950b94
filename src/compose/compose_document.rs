//! One compose file as the reading sees it: read from the project, parsed as YAML (merge
//! keys `<<` applied), its top level a mapping, every string value interpolated.

use std::path::Path;

use serde_yaml::{Mapping, Value};

use super::compose_env::ComposeEnv;
use super::interpolation::substitute_value;
use super::project_files::{invalid, ProjectFiles};
use crate::error::Result;

/// The most files one reading loads (compose files and the files `extends` names).
const LOAD_LIMIT: usize = 64;

pub struct Loader<'a> {
    pub files: &'a ProjectFiles,
    pub env: &'a ComposeEnv<'a>,
    loads: usize,
}

impl<'a> Loader<'a> {
    pub fn new(files: &'a ProjectFiles, env: &'a ComposeEnv<'a>) -> Loader<'a> {
        Loader {
            files,
            env,
            loads: 0,
        }
    }

    /// The file at `path` (absolute), parsed and interpolated.
    pub fn load(&mut self, path: &Path) -> Result<Mapping> {
        self.loads += 1;
        if self.loads > LOAD_LIMIT {
            return Err(invalid(
                path,
                format_args!("more than {LOAD_LIMIT} compose files loaded (extends)"),
            ));
        }
        let text = self.files.read(path)?;
        parse_document(path, &text, self.env)
    }
}

pub fn parse_document(path: &Path, text: &str, env: &ComposeEnv<'_>) -> Result<Mapping> {
    let mut value: Value = serde_yaml::from_str(text).map_err(|e| invalid(path, e))?;
    value.apply_merge().map_err(|e| invalid(path, e))?;
    substitute_value(&mut value, env, "").map_err(|e| invalid(path, e))?;
    match value {
        Value::Mapping(map) => Ok(map),
        Value::Null => Err(invalid(path, "is empty")),
        _ => Err(invalid(path, "the top level must be a mapping")),
    }
}
