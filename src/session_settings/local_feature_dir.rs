//! A local feature's folder (devcontainer.json's `./…` feature reference) checked against the
//! project: inside it, every component a real directory, never a symlink. Checked when the
//! settings are resolved and again when the feature's files are read for a build.

use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorCode, Result};

/// A feature refused, naming its reference.
pub fn feature_refused(reference: &str, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Devcontainer,
        format!("feature {reference}: {why}"),
    )
}

/// The folder of a local feature (`path` lexical, from devcontainer.json's folder): inside
/// `project`, every component a real directory, never a symlink. Returns it canonical.
pub fn checked_local_dir(project: &Path, path: &Path, reference: &str) -> Result<PathBuf> {
    let canonical_project = std::fs::canonicalize(project).map_err(|e| {
        feature_refused(
            reference,
            format_args!("project {}: {e}", project.display()),
        )
    })?;
    let relative = path
        .strip_prefix(project)
        .or_else(|_| path.strip_prefix(&canonical_project))
        .map_err(|_| {
            feature_refused(
                reference,
                format_args!(
                    "{} is outside the project; a local feature must be in the project's .devcontainer folder",
                    path.display()
                ),
            )
        })?;
    let mut at = canonical_project.clone();
    for part in relative.components() {
        at.push(part);
        let meta = std::fs::symlink_metadata(&at)
            .map_err(|e| feature_refused(reference, format_args!("{}: {e}", at.display())))?;
        if meta.file_type().is_symlink() {
            return Err(feature_refused(
                reference,
                format_args!(
                    "{} is a symlink; a local feature's path is never followed through one",
                    at.display()
                ),
            ));
        }
        if !meta.is_dir() {
            return Err(feature_refused(
                reference,
                format_args!("{} is not a directory", at.display()),
            ));
        }
    }
    Ok(at)
}
