//! The project's files a compose config reads (compose files, an `extends` file, `.env`, an
//! `env_file`), read as devcontainer.json is: read once, the path with its symlinks resolved
//! must stay inside the project, and the file must be a regular file (opened without
//! following a last symlink and without blocking on a FIFO) of at most `FILE_LIMIT` bytes.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorCode, Result};
use crate::session_settings::lexical;

/// The most read of one file.
pub const FILE_LIMIT: u64 = 1 << 20;

pub fn invalid(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Devcontainer,
        format!("{}: {why}", path.display()),
    )
}

/// The project, canonical, and reads confined to it.
pub struct ProjectFiles {
    root: PathBuf,
}

impl ProjectFiles {
    pub fn new(project: &Path) -> Result<ProjectFiles> {
        let root = std::fs::canonicalize(project).map_err(|e| invalid(project, e))?;
        Ok(ProjectFiles { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` (absolute) with its symlinks resolved, when it exists; refused when that is
    /// outside the project.
    pub fn locate(&self, path: &Path) -> Result<Option<PathBuf>> {
        let path = lexical(path).ok_or_else(|| invalid(path, "not an absolute path"))?;
        let canonical = match std::fs::canonicalize(&path) {
            Ok(canonical) => canonical,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(invalid(&path, e)),
        };
        if !canonical.starts_with(&self.root) {
            return Err(invalid(
                &path,
                format_args!(
                    "is outside the project {} (resolved to {}); a compose config reads only the project's files",
                    self.root.display(),
                    canonical.display()
                ),
            ));
        }
        Ok(Some(canonical))
    }

    /// The file's text; `None` when it does not exist.
    pub fn read_optional(&self, path: &Path) -> Result<Option<String>> {
        let Some(canonical) = self.locate(path)? else {
            return Ok(None);
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&canonical)
            .map_err(|e| invalid(path, e))?;
        let meta = file.metadata().map_err(|e| invalid(path, e))?;
        if !meta.is_file() {
            return Err(invalid(path, "is not a regular file"));
        }
        let mut bytes = Vec::new();
        file.take(FILE_LIMIT + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| invalid(path, e))?;
        if bytes.len() as u64 > FILE_LIMIT {
            return Err(invalid(
                path,
                format_args!("larger than {FILE_LIMIT} bytes, the most read of a compose file"),
            ));
        }
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| invalid(path, "is not UTF-8"))
    }

    pub fn read(&self, path: &Path) -> Result<String> {
        self.read_optional(path)?
            .ok_or_else(|| invalid(path, "no such file"))
    }
}
