//! `DockerFileIO`: Magenta's `FileIO` inside a container (CONTRACT §3). Paths under a bind
//! mount go to the host file system through a symlink-safe walk; everything else, and
//! whatever that walk cannot answer, goes through the archive endpoints. A listing uses one
//! exec where the image has a shell (the archive of a directory carries its whole subtree).

use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::container_facts::{ContainerFacts, FactsRequest};
use super::container_path::{resolve, split};
use super::engine_files::{file_error, EngineFiles};
use super::host_files::{Host, HostFiles};
use crate::engine::{Engine, EngineOptions};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::exec::{run_buffered, ExecRequest};
use crate::runtime::{ContainerUse, UseGuard};

#[derive(Debug, Clone)]
pub struct FileIoOptions {
    pub container: String,
    pub cwd: Option<String>,
    pub user: Option<String>,
    pub engine: EngineOptions,
    /// Answer from the container's root on the host where the engine shares this kernel;
    /// `false`: always through the engine.
    pub host_access: bool,
}

impl Default for FileIoOptions {
    fn default() -> Self {
        FileIoOptions {
            container: String::new(),
            cwd: None,
            user: None,
            engine: EngineOptions::default(),
            host_access: true,
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

const LIST_SCRIPT: &str = r#"cd -- "$1" || exit 3
for f in * .[!.]* ..?*; do
  if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
done"#;

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
        let _use = match &self.usage {
            Some(usage) => usage.begin().await?,
            None => UseGuard::none(),
        };
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
        Ok(resolve(cwd, path))
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
        let Some(host) = facts
            .host
            .as_ref()
            .filter(|h| (!write || facts.host_writes) && h.covers(path))
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
            let files = self.files(&engine, &facts, &path)?;
            let (real, stat) = files.stat(&path).await?;
            if stat.is_dir() {
                return Err(file_error(ErrorCode::Eisdir, self.container(), &path));
            }
            let mut data = Vec::with_capacity(stat.size as usize);
            files
                .read_file(&real, |chunk| data.extend_from_slice(&chunk))
                .await?;
            Ok(data)
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
            let files = self.files(&engine, &facts, &path)?;
            // A dangling symlink is written through, to where it points, as Node does.
            let (target, mode) = match files.resolve(&path).await? {
                (_, Some(stat)) if stat.is_dir() => {
                    return Err(file_error(ErrorCode::Eisdir, self.container(), &path))
                }
                (real, Some(stat)) => (real, stat.unix_mode()),
                (real, None) => (real, 0o644),
            };
            let Some((dir, name)) = split(&target) else {
                return Err(file_error(ErrorCode::Eisdir, self.container(), &path));
            };
            match files.stat_if_exists(&dir).await? {
                Some((real_dir, stat)) if stat.is_dir() => {
                    files
                        .write_file(&real_dir, &name, content, mode, user.owner())
                        .await
                }
                Some(_) => Err(file_error(ErrorCode::Enotdir, self.container(), &path)),
                None => Err(file_error(ErrorCode::Enoent, self.container(), &path)),
            }
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
            let files = self.files(&engine, &facts, &path)?;
            // Up to the deepest existing ancestor, then one archive of the missing chain.
            let mut missing: Vec<String> = Vec::new();
            let mut current = path.clone();
            let base = loop {
                match files.stat(&current).await {
                    Ok((real, stat)) if stat.is_dir() => break real,
                    Ok(_) if missing.is_empty() => {
                        return Err(file_error(ErrorCode::Eexist, self.container(), &path))
                    }
                    Ok(_) => return Err(file_error(ErrorCode::Enotdir, self.container(), &path)),
                    Err(err) if err.code == ErrorCode::Enoent => {
                        if files.resolve(&current).await?.0 != current {
                            // A dangling symlink: mkdir does not create its target.
                            return Err(file_error(ErrorCode::Eexist, self.container(), &current));
                        }
                        let (parent, name) = split(&current).ok_or(err)?;
                        missing.push(name);
                        current = parent;
                    }
                    Err(err) => return Err(err),
                }
            };
            if missing.is_empty() {
                return Ok(());
            }
            missing.reverse();
            let chain: Vec<String> = (1..=missing.len())
                .map(|n| missing[..n].join("/"))
                .collect();
            files.make_dirs(&base, &chain, user.owner()).await
        })
        .await
    }

    pub async fn read_dir(&self, path: &str) -> Result<Vec<String>> {
        self.with(|engine, facts| async move {
            let path = self.absolute(&facts, path)?;
            let at = path.clone();
            if let Host::Done(mut names) = self
                .on_host(&facts, &path, false, move |h| h.read_dir(&at))
                .await?
            {
                names.sort();
                return Ok(names);
            }
            let files = self.files(&engine, &facts, &path)?;
            let (real, stat) = files.stat(&path).await?;
            if !stat.is_dir() {
                return Err(file_error(ErrorCode::Enotdir, self.container(), &path));
            }
            let listed = if facts.has_shell && facts.running {
                self.list_by_exec(&engine, &path, &real).await
            } else {
                Ok(None)
            };
            let mut names = match listed? {
                Some(names) => names,
                None => files.list_dir(&real).await?,
            };
            names.sort();
            Ok(names)
        })
        .await
    }

    /// One exec of a NUL-separated listing; `None` when the container stopped meanwhile.
    async fn list_by_exec(
        &self,
        engine: &Engine,
        path: &str,
        real: &str,
    ) -> Result<Option<Vec<String>>> {
        let request = ExecRequest {
            command: vec![
                "/bin/sh".into(),
                "-c".into(),
                LIST_SCRIPT.into(),
                "sh".into(),
                real.to_string(),
            ],
            user: Some("0".into()),
            timeout: Some(engine.timeout()),
            ..Default::default()
        };
        let out = match run_buffered(engine, self.container(), request).await {
            Ok(out) => out,
            Err(err) if err.code == ErrorCode::ContainerNotRunning => return Ok(None),
            Err(err) => return Err(err),
        };
        if out.exit_code != 0 {
            return Err(file_error(ErrorCode::Eacces, self.container(), path));
        }
        Ok(Some(
            out.stdout
                .split(|&b| b == 0)
                .filter(|n| !n.is_empty())
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .collect(),
        ))
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
