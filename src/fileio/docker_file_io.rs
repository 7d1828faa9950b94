//! `DockerFileIO`: Magenta's `FileIO` inside a container (CONTRACT §3). Paths under a bind
//! mount go to the host file system through a symlink-safe walk; everything else, and
//! whatever that walk cannot answer, goes through the archive endpoints. A listing uses one
//! exec where the image has a shell (the archive of a directory carries its whole subtree).

use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::container_facts::{ContainerFacts, FactsRequest};
use super::container_path::{resolve, too_long};
use super::engine_files::{file_error, EngineFiles};
use super::engine_paths;
use super::host_files::{Host, HostFiles};
use crate::agent::{AgentFiles, AgentReply, FileKind, Stat};
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
    options: FileIoOptions,
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

    async fn engine(&self) -> Result<Engine> {
        Engine::connect(&self.options.engine).await
    }

    fn forget(&self) {
        *self.facts.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    async fn facts(&self, engine: &Engine) -> Result<ContainerFacts> {
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
    async fn with<T, F, Fut>(&self, op: F) -> Result<T>
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

    fn absolute(&self, facts: &ContainerFacts, path: &str) -> Result<String> {
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
    async fn on_host<T, F>(
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
    fn files<'a>(
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
    async fn on_agent<T, F, Fut>(&self, facts: &ContainerFacts, op: F) -> Result<Host<T>>
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

    pub async fn read_file(&self, path: &str) -> Result<Vec<u8>> {
        self.with(|engine, facts| async move {
            let path = self.absolute(&facts, path)?;
            let at = path.clone();
            if let Host::Done(data) = self
                .on_host(&facts, &path, false, move |h| h.read(&at))
                .await?
            {
                return Ok(data);
            }
            let p = &path;
            let on_agent = self
                .on_agent(&facts, move |files| async move {
                    // A missing file is read anyway: the read's error says why (ENOTDIR...).
                    let stat = files.stat(p, true).await?.unwrap_or(Stat {
                        kind: FileKind::Missing,
                        size: 0,
                        mtime_sec: 0,
                        mtime_nsec: 0,
                        mode: 0,
                    });
                    if stat.kind == FileKind::Dir {
                        return Err(file_error(ErrorCode::Eisdir, self.container(), p));
                    }
                    Ok(match files.read(p, stat.size).await? {
                        AgentReply::Done(data) => Host::Done(data),
                        AgentReply::NotRegular => Host::Fallback,
                    })
                })
                .await?;
            if let Host::Done(data) = on_agent {
                return Ok(data);
            }
            engine_paths::read(&self.files(&engine, &facts, &path)?, &path).await
        })
        .await
    }

    pub async fn write_file(&self, path: &str, content: Bytes) -> Result<()> {
        self.with(|engine, facts| async move {
            let path = self.absolute(&facts, path)?;
            let user = &facts.user;
            let (at, data, uid, gid) = (path.clone(), content.clone(), user.uid, user.gid);
            let on_host = self
                .on_host(&facts, &path, true, move |h| h.write(&at, &data, uid, gid))
                .await?;
            if let Host::Done(()) = on_host {
                return Ok(());
            }
            let (p, c) = (&path, &content);
            let on_agent = self
                .on_agent(&facts, move |files| async move {
                    files.write(p, c).await.map(Host::Done)
                })
                .await?;
            if let Host::Done(()) = on_agent {
                return Ok(());
            }
            let files = self.files(&engine, &facts, &path)?;
            engine_paths::write(&files, &path, content, user.owner()).await
        })
        .await
    }

    pub async fn stat(&self, path: &str) -> Result<Option<FileStat>> {
        self.with(|engine, facts| async move {
            let path = self.absolute(&facts, path)?;
            let at = path.clone();
            if let Host::Done(found) = self
                .on_host(&facts, &path, false, move |h| h.stat(&at))
                .await?
            {
                return Ok(found.map(|s| FileStat {
                    mtime_ms: s.mtime_ms,
                    size: s.size,
                }));
            }
            let p = &path;
            let on_agent = self
                .on_agent(&facts, move |files| async move {
                    Ok(Host::Done(files.stat(p, true).await?.map(|s| FileStat {
                        mtime_ms: s.mtime_sec as f64 * 1000.0 + s.mtime_nsec as f64 / 1e6,
                        size: s.size,
                    })))
                })
                .await?;
            if let Host::Done(found) = on_agent {
                return Ok(found);
            }
            let found = self
                .files(&engine, &facts, &path)?
                .stat_if_exists(&path)
                .await?;
            Ok(found.map(|(_, s)| FileStat {
                mtime_ms: s.mtime_ms,
                size: s.size,
            }))
        })
        .await
    }

    /// `Some(is_dir)` for an existing path (symlinks followed), `None` for a missing one.
    async fn kind(&self, path: &str) -> Result<Option<bool>> {
        self.with(|engine, facts| async move {
            let path = self.absolute(&facts, path)?;
            let at = path.clone();
            if let Host::Done(found) = self
                .on_host(&facts, &path, false, move |h| h.stat(&at))
                .await?
            {
                return Ok(found.map(|s| s.is_dir));
            }
            let p = &path;
            let on_agent = self
                .on_agent(&facts, move |files| async move {
                    let found = files.stat(p, true).await?;
                    Ok(Host::Done(found.map(|s| s.kind == FileKind::Dir)))
                })
                .await?;
            if let Host::Done(found) = on_agent {
                return Ok(found);
            }
            let found = self
                .files(&engine, &facts, &path)?
                .stat_if_exists(&path)
                .await?;
            Ok(found.map(|(_, s)| s.is_dir()))
        })
        .await
    }

    pub async fn file_exists(&self, path: &str) -> Result<bool> {
        Ok(self.kind(path).await?.is_some())
    }

    pub async fn is_directory(&self, path: &str) -> Result<bool> {
        Ok(self.kind(path).await? == Some(true))
    }

    pub async fn mkdir(&self, path: &str) -> Result<()> {
        self.with(|engine, facts| async move {
            let path = self.absolute(&facts, path)?;
            let user = &facts.user;
            let (at, uid, gid) = (path.clone(), user.uid, user.gid);
            let on_host = self
                .on_host(&facts, &path, true, move |h| h.make_dirs(&at, uid, gid))
                .await?;
            if let Host::Done(()) = on_host {
                return Ok(());
            }
            let p = &path;
            let on_agent = self
                .on_agent(&facts, move |files| async move {
                    files.make_dirs(p).await.map(Host::Done)
                })
                .await?;
            if let Host::Done(()) = on_agent {
                return Ok(());
            }
            let files = self.files(&engine, &facts, &path)?;
            engine_paths::make_dirs(&files, &path, user.owner()).await
        })
        .await
    }

    pub async fn read_dir(&self, path: &str) -> Result<Vec<String>> {
        self.with(|engine, facts| async move {
            let path = self.absolute(&facts, path)?;
            let at = path.clone();
            let mut names = match self
                .on_host(&facts, &path, false, move |h| h.read_dir(&at))
                .await?
            {
                Host::Done(names) => names,
                Host::Fallback => {
                    let p = &path;
                    let on_agent = self
                        .on_agent(&facts, move |files| async move {
                            files.read_dir(p).await.map(Host::Done)
                        })
                        .await?;
                    match on_agent {
                        Host::Done(names) => names,
                        Host::Fallback => {
                            let files = self.files(&engine, &facts, &path)?;
                            let exec_listing = facts.has_shell && facts.running;
                            engine_paths::read_dir(&files, &path, exec_listing).await?
                        }
                    }
                }
            };
            names.sort();
            Ok(names)
        })
        .await
    }

    /// The container user's home directory (from /etc/passwd), else `/root` for root.
    pub async fn home_dir(&self) -> Result<String> {
        self.with(|_engine, facts| async move {
            Ok(facts.user.home.clone().unwrap_or_else(|| {
                if facts.user.uid == 0 {
                    "/root".into()
                } else {
                    "/".into()
                }
            }))
        })
        .await
    }

    /// The directory relative paths resolve against.
    pub async fn cwd(&self) -> Result<String> {
        if let Some(cwd) = &self.options.cwd {
            return Ok(cwd.clone());
        }
        self.with(|_engine, facts| async move { Ok(facts.working_dir.clone()) })
            .await
    }
}
