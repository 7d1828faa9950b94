//! `DockerFileIO`: Magenta's `FileIO` inside a container (docs/contract.md §3). Paths under a bind
//! mount go to the host file system through a symlink-safe walk; everything else, and
//! whatever that walk cannot answer, goes through the archive endpoints. A listing uses one
//! exec where the image has a shell (the archive of a directory carries its whole subtree).

use std::sync::{Arc, Mutex};

use super::container_facts::{ContainerFacts, FactsRequest};
use super::host_files::{Host, HostFiles};
use crate::agent::AgentFiles;
use crate::container_archive::{resolve, too_long, EngineFiles};
use crate::engine::{Engine, EngineOptions};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::{begin_use, ContainerUse};

#[derive(Debug, Clone)]
pub struct FileIoOptions {
    pub container: String,
    pub cwd: Option<String>,
    pub user: Option<String>,
    pub engine: EngineOptions,
    /// Answer from the container's root on the host where the engine shares this kernel;
    /// `false`: always through the engine.
    pub host_access: bool,
    /// Use the container's session agent where it runs; `false`: never.
    pub agent: bool,
}

impl Default for FileIoOptions {
    fn default() -> Self {
        FileIoOptions {
            container: String::new(),
            cwd: None,
            user: None,
            engine: EngineOptions::default(),
            host_access: true,
            agent: true,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileStat {
    pub mtime_ms: f64,
    pub size: u64,
}

pub struct DockerFileIo {
    pub(super) options: FileIoOptions,
    facts: Mutex<Option<ContainerFacts>>,
    usage: Option<Arc<dyn ContainerUse>>,
}

impl DockerFileIo {
    pub fn new(options: FileIoOptions) -> Result<DockerFileIo> {
        if options.container.is_empty() {
            return Err(Error::invalid_argument("DockerFileIO needs a container"));
        }
        if let Some(cwd) = &options.cwd {
            if !cwd.starts_with('/') {
                return Err(Error::invalid_argument(format!(
                    "DockerFileIO cwd '{cwd}' must be an absolute container path"
                )));
            }
        }
        Ok(DockerFileIo {
            options,
            facts: Mutex::new(None),
            usage: None,
        })
    }

    /// Runs `usage` before every operation (a workspace's idle tracking).
    pub fn with_usage(mut self, usage: Arc<dyn ContainerUse>) -> Self {
        self.usage = Some(usage);
        self
    }

    pub fn container(&self) -> &str {
        &self.options.container
    }

    pub(super) async fn engine(&self) -> Result<Engine> {
        Engine::connect(&self.options.engine).await
    }

    pub(super) fn forget(&self) {
        *self.facts.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    pub(super) async fn facts(&self, engine: &Engine) -> Result<ContainerFacts> {
        let cached = self.facts.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(facts) = cached.as_ref().filter(|f| f.fresh()) {
            return Ok(facts.clone());
        }
        let request = FactsRequest {
            container: self.container(),
            user: self.options.user.as_deref(),
            host_access: self.options.host_access,
            agent: self.options.agent,
        };
        let facts = ContainerFacts::inspect(engine, &request, cached).await?;
        *self.facts.lock().unwrap_or_else(|e| e.into_inner()) = Some(facts.clone());
        Ok(facts)
    }

    /// Runs `op` with the engine and fresh facts; on an engine error the facts are dropped so
    /// that a recreated container is seen at the next call.
    pub(super) async fn with<T, F, Fut>(&self, op: F) -> Result<T>
    where
        F: FnOnce(Engine, ContainerFacts) -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let _use = begin_use(self.usage.as_ref()).await?;
        let engine = self.engine().await?;
        let facts = self.facts(&engine).await?;
        let result = op(engine, facts).await;
        if let Err(err) = &result {
            if matches!(
                err.code,
                ErrorCode::ContainerNotFound
                    | ErrorCode::EngineUnavailable
                    | ErrorCode::EngineError
            ) {
                self.forget();
            }
        }
        result
    }

    pub(super) fn absolute(&self, facts: &ContainerFacts, path: &str) -> Result<String> {
        if path.is_empty() {
            return Err(Error::invalid_argument(format!(
                "empty path in container '{}'",
                self.container()
            )));
        }
        if path.contains('\0') {
            return Err(Error::invalid_argument(format!(
                "path with a NUL byte in container '{}'",
                self.container()
            )));
        }
        let cwd = self.options.cwd.as_deref().unwrap_or(&facts.working_dir);
        let absolute = resolve(cwd, path);
        if too_long(&absolute) {
            return Err(Error::new(
                ErrorCode::Enametoolong,
                format!(
                    "ENAMETOOLONG: name too long, '{path}' in container '{}'",
                    self.container()
                ),
            ));
        }
        Ok(absolute)
    }

    /// Runs `op` on the host file system for `path`, off the async workers (it may read or
    /// write a large file); `Fallback` when the host path does not apply.
    pub(super) async fn on_host<T, F>(
        &self,
        facts: &ContainerFacts,
        path: &str,
        write: bool,
        op: F,
    ) -> Result<Host<T>>
    where
        T: Send + 'static,
        F: FnOnce(&HostFiles) -> Result<Host<T>> + Send + 'static,
    {
        // Root's operations only, where an agent runs to check others' permissions.
        let Some(host) = facts
            .host
            .as_ref()
            .filter(|h| facts.host_answers() && (!write || facts.host_writes) && h.covers(path))
            .cloned()
        else {
            return Ok(Host::Fallback);
        };
        tokio::task::spawn_blocking(move || op(&host))
            .await
            .map_err(|e| {
                Error::new(
                    ErrorCode::EngineError,
                    format!(
                        "host file operation in container '{}': {e}",
                        self.container()
                    ),
                )
            })?
    }

    /// The engine's archive endpoints for `path`, unless they are unsafe for this container.
    pub(super) fn files<'a>(
        &'a self,
        engine: &'a Engine,
        facts: &ContainerFacts,
        path: &str,
    ) -> Result<EngineFiles<'a>> {
        if let Some(why) = &facts.engine_unsafe {
            let state = if facts.running {
                "not reachable from here"
            } else {
                "stopped"
            };
            return Err(Error::new(
                ErrorCode::Eacces,
                format!(
                    "'{path}' in container '{}': refused: {why} (the container's root is {state})",
                    self.container()
                ),
            ));
        }
        Ok(EngineFiles {
            engine,
            container: self.container(),
        })
    }

    /// Runs `op` on the container's agent, where one runs and the host does not answer;
    /// `Fallback` otherwise, and when the agent went away meanwhile.
    pub(super) async fn on_agent<T, F, Fut>(&self, facts: &ContainerFacts, op: F) -> Result<Host<T>>
    where
        F: FnOnce(AgentFiles) -> Fut,
        Fut: std::future::Future<Output = Result<Host<T>>>,
    {
        let Some(connection) = &facts.agent else {
            return Ok(Host::Fallback);
        };
        let files = AgentFiles {
            connection: connection.clone(),
            creds: facts.creds(),
        };
        match op(files).await {
            Err(_) if connection.is_closed() => {
                self.forget();
                Ok(Host::Fallback)
            }
            other => other,
        }
    }
}
