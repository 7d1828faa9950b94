//! Magenta's `FileIO` on a session Pod: every operation through the Pod's session agent, as
//! the files' user (`user`, else the Pod's), paths relative to `cwd` (else the container's
//! working directory). A Pod has no archive endpoint and no host path, so where the agent
//! cannot serve, each call rejects `UNSUPPORTED` with the reason.

use std::sync::Arc;

use tokio::sync::OnceCell;

use super::kubernetes_runtime::KubernetesRuntime;
use super::serving_agent::{read_serving_agent, serving_agent};
use crate::agent::{connection_user, AgentFiles, AgentReply, FileKind, Stat};
use crate::container_archive::file_error;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::{begin_use, ContainerUse, UseGuard};

/// What `stat` reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PodFileStat {
    pub mtime_ms: f64,
    pub size: u64,
}

pub struct PodFiles {
    runtime: Arc<KubernetesRuntime>,
    pod: String,
    user: Option<String>,
    cwd: Option<String>,
    /// The container's working directory, read once.
    working_dir: OnceCell<String>,
    /// Told of each operation (a session's idle tracking), which it may start the Pod for.
    usage: Option<Arc<dyn ContainerUse>>,
}

impl PodFiles {
    pub fn new(
        runtime: Arc<KubernetesRuntime>,
        pod: &str,
        user: Option<String>,
        cwd: Option<String>,
    ) -> PodFiles {
        PodFiles {
            runtime,
            pod: pod.to_string(),
            user: user.filter(|u| !u.is_empty()),
            cwd: cwd.filter(|c| !c.is_empty()),
            working_dir: OnceCell::new(),
            usage: None,
        }
    }

    /// Each operation begins a use of `usage` first and holds it until it ends.
    pub fn with_usage(mut self, usage: Arc<dyn ContainerUse>) -> Self {
        self.usage = Some(usage);
        self
    }

    /// The agent's file operations as the files' user, `path` made absolute, and the use
    /// they make of the Pod (held until the operation ends).
    async fn files(&self, path: &str) -> Result<(AgentFiles, String, UseGuard)> {
        let guard = begin_use(self.usage.as_ref()).await?;
        let agent = match self.working_dir.initialized() || self.cwd.is_some() {
            true => serving_agent(&self.runtime, &self.pod, "files").await?,
            false => {
                let (agent, working_dir) =
                    read_serving_agent(&self.runtime, &self.pod, "files").await?;
                let _ = self.working_dir.set(working_dir);
                agent
            }
        };
        let user = connection_user(&agent, self.user.as_deref()).await?;
        let base = match &self.cwd {
            Some(cwd) => cwd.as_str(),
            None => self.working_dir.get().map_or("/", String::as_str),
        };
        let files = AgentFiles {
            connection: agent,
            creds: user.creds(),
        };
        Ok((files, absolute(base, path)?, guard))
    }

    pub async fn read_file(&self, path: &str) -> Result<Vec<u8>> {
        let (files, path, _use) = self.files(path).await?;
        // A missing file is read anyway: the read's error says why (ENOTDIR...).
        let stat = files.stat(&path, true).await?;
        let size = match stat {
            Some(Stat {
                kind: FileKind::Dir,
                ..
            }) => return Err(file_error(ErrorCode::Eisdir, &self.pod, &path)),
            Some(stat) => stat.size,
            None => 0,
        };
        match files.read(&path, size).await? {
            AgentReply::Done(data) => Ok(data),
            AgentReply::NotRegular => Err(Error::new(
                ErrorCode::Unsupported,
                format!("container '{}': {path} is not a regular file", self.pod),
            )),
        }
    }

    /// Creates or replaces the file whole (old content or new, never a mix).
    pub async fn write_file(&self, path: &str, content: &[u8]) -> Result<()> {
        let (files, path, _use) = self.files(path).await?;
        files.write(&path, content).await
    }

    /// An existing path's stat (symlinks followed); `None` for a missing one.
    pub async fn stat(&self, path: &str) -> Result<Option<(PodFileStat, bool)>> {
        let (files, path, _use) = self.files(path).await?;
        Ok(files.stat(&path, true).await?.map(|s| {
            let mtime_ms = s.mtime_sec as f64 * 1000.0 + s.mtime_nsec as f64 / 1e6;
            let stat = PodFileStat {
                mtime_ms,
                size: s.size,
            };
            (stat, s.kind == FileKind::Dir)
        }))
    }

    pub async fn file_exists(&self, path: &str) -> Result<bool> {
        Ok(self.stat(path).await?.is_some())
    }

    pub async fn is_directory(&self, path: &str) -> Result<bool> {
        Ok(self.stat(path).await?.is_some_and(|(_, dir)| dir))
    }

    /// Recursive, like `mkdir -p`.
    pub async fn mkdir(&self, path: &str) -> Result<()> {
        let (files, path, _use) = self.files(path).await?;
        files.make_dirs(&path).await
    }

    /// Names, dotfiles included, sorted.
    pub async fn read_dir(&self, path: &str) -> Result<Vec<String>> {
        let (files, path, _use) = self.files(path).await?;
        let mut names = files.read_dir(&path).await?;
        names.sort();
        Ok(names)
    }
}

/// `path` against `base` (a relative base is refused: it would depend on the agent's own
/// working directory).
fn absolute(base: &str, path: &str) -> Result<String> {
    if path.is_empty() || path.contains('\0') {
        return Err(Error::invalid_argument(format!(
            "'{}' is not a path",
            path.escape_debug()
        )));
    }
    if path.starts_with('/') {
        return Ok(path.to_string());
    }
    if !base.starts_with('/') {
        return Err(Error::invalid_argument(format!(
            "cwd '{base}' is not an absolute path"
        )));
    }
    Ok(format!("{}/{path}", base.trim_end_matches('/')))
}

#[cfg(test)]
mod tests {
    use super::absolute;

    #[test]
    fn paths_resolve_against_the_base() {
        assert_eq!(absolute("/w", "a/b").unwrap(), "/w/a/b");
        assert_eq!(absolute("/", "a").unwrap(), "/a");
        assert_eq!(absolute("/w/", "/etc/x").unwrap(), "/etc/x");
        assert!(absolute("w", "a").is_err());
        assert!(absolute("/w", "").is_err());
        assert!(absolute("/w", "a\0b").is_err());
    }
}
