//! Host paths a compose service names — bind mount sources, a build's context and
//! Dockerfile — placed against the project: inside it they are the project's (a session
//! mounts its clone's), outside it only what the host's trust allows, with the same checks
//! devcontainer.json's mounts get (`hostPaths`, `engineSocket`).

use std::path::{Path, PathBuf};

use super::compose_plan::MountSource;
use super::project_files::ProjectFiles;
use crate::session_settings::{is_trusted, lexical, reaches_socket, Grant, Refusal, Trust};

pub struct PathRules<'a> {
    pub files: &'a ProjectFiles,
    /// The project as the caller named it (absolute, not canonical).
    pub project: &'a Path,
    /// The compose project's folder: relative paths start there.
    pub compose_dir: &'a Path,
    pub trust: &'a Trust,
    pub engine_sockets: &'a [PathBuf],
}

impl PathRules<'_> {
    /// `path` as written, absolute (relative: from the compose project's folder).
    fn absolute(&self, path: &Path) -> Result<PathBuf, String> {
        if path.starts_with("~") {
            return Err(format!(
                "'{}' is in the home folder of whoever runs compose; name a path in the project",
                path.display()
            ));
        }
        lexical(&self.compose_dir.join(path))
            .ok_or_else(|| format!("'{}' is not a path", path.display()))
    }

    /// The path from the project's root when `path` (absolute, lexical) is inside it.
    fn in_project(&self, path: &Path) -> Option<PathBuf> {
        let relative = path
            .strip_prefix(self.project)
            .or_else(|_| path.strip_prefix(self.files.root()))
            .ok()?
            .to_path_buf();
        // Symlinks in the project may not lead out of it.
        match std::fs::canonicalize(path) {
            Ok(canonical) if !canonical.starts_with(self.files.root()) => None,
            _ => Some(relative),
        }
    }

    /// Where a bind mount's source is; `Ok(None)` when refused (a refusal pushed).
    pub fn bind_source(
        &self,
        field: &str,
        source: &Path,
        refusals: &mut Vec<Refusal>,
    ) -> Result<Option<MountSource>, String> {
        let path = self.absolute(source)?;
        if let Some(relative) = self.in_project(&path) {
            return Ok(Some(MountSource::Project(relative)));
        }
        let canonical = std::fs::canonicalize(&path).map_err(|e| {
            format!(
                "{field}: bind mount source '{}' cannot be used ({e}); sources outside the project must exist and are never created",
                path.display()
            )
        })?;
        let shown = canonical.to_string_lossy().into_owned();
        let mut allowed = true;
        if !is_trusted(&canonical, &self.trust.host_paths) {
            refusals.push(Refusal::new(
                field,
                format!("bind mount of host path {shown} (outside the project)"),
                Grant::List("hostPaths", vec![shown.clone()]),
            ));
            allowed = false;
        }
        if reaches_socket(&canonical, self.engine_sockets) && !self.trust.engine_socket {
            refusals.push(Refusal::new(
                field,
                format!("{shown} gives the container the engine's socket"),
                Grant::Flag("engineSocket"),
            ));
            allowed = false;
        }
        Ok(allowed.then_some(MountSource::Host(canonical)))
    }

    /// A build's context (`dir`) or Dockerfile: inside the project (symlinks resolved) or
    /// under a trusted path. A Dockerfile that does not exist is kept as written (the build
    /// then fails with the engine's message); a context must exist.
    pub fn build_path(
        &self,
        field: &str,
        path: &Path,
        dir: bool,
        refusals: &mut Vec<Refusal>,
    ) -> Result<PathBuf, String> {
        let path = self.absolute(path)?;
        let canonical = match std::fs::canonicalize(&path) {
            Ok(canonical) if !dir || canonical.is_dir() => canonical,
            Ok(_) => return Err(format!("{field} {} is not a folder", path.display())),
            Err(_) if !dir => path.clone(),
            Err(e) => return Err(format!("{field} {}: {e}", path.display())),
        };
        let inside =
            canonical.starts_with(self.files.root()) || self.in_project(&canonical).is_some();
        if !inside && !is_trusted(&canonical, &self.trust.host_paths) {
            let shown = canonical.to_string_lossy().into_owned();
            refusals.push(Refusal::new(
                field,
                format!("{shown} is outside the project"),
                Grant::List("hostPaths", vec![shown.clone()]),
            ));
        }
        Ok(canonical)
    }
}
