//! A project directory as a caller names it: made absolute (from the current directory,
//! links left alone) and required to be an existing directory.

use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorCode, Result};

/// The absolute path of `project`; `ENOENT` when it does not exist, `ENOTDIR` when it is
/// not a directory.
pub fn project_dir(project: &Path) -> Result<PathBuf> {
    let absolute = std::path::absolute(project).map_err(|e| {
        Error::new(
            ErrorCode::InvalidArgument,
            format!("{}: {e}", project.display()),
        )
    })?;
    match std::fs::metadata(&absolute) {
        Ok(meta) if meta.is_dir() => Ok(absolute),
        Ok(_) => Err(Error::new(
            ErrorCode::Enotdir,
            format!("project {}: not a directory", absolute.display()),
        )),
        Err(_) => Err(Error::new(
            ErrorCode::Enoent,
            format!("project {}: no such directory", absolute.display()),
        )),
    }
}
