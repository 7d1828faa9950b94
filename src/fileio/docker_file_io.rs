//! `DockerFileIO`: Magenta's `FileIO` inside a container (CONTRACT §3). Paths under a bind
//! mount go to the host file system through a symlink-safe walk; everything else, and
//! whatever that walk cannot answer, goes through the archive endpoints. A listing uses one
//! exec where the image has a shell (the archive of a directory carries its whole subtree).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::container_path::{resolve, split};
use super::engine_files::{subject, EngineFiles};
use super::host_files::{Host, HostFiles, HostMount};
use super::user_ids::{resolve_user, UserIds};
use crate::engine::{Engine, EngineOptions};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::exec::{run_buffered, ExecRequest};
use crate::runtime::{bind_mounts, path_exists};

/// How long what we learned from inspecting the container is trusted: a container recreated
/// under the same name is noticed within this time (and at once on any engine error).
const FACTS_TTL: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Default)]
pub struct FileIoOptions {
    pub container: String,
    pub cwd: Option<String>,
    pub user: Option<String>,
    pub engine: EngineOptions,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileStat {
    pub mtime_ms: f64,
    pub size: u64,
}

/// What the container's inspect tells us, refreshed after `FACTS_TTL`.
#[derive(Clone)]
struct ContainerFacts {
    fetched: Instant,
    engine_id: String,
    working_dir: String,
    running: bool,
    mounts: Vec<HostMount>,
    /// The host may act on the mounts: a local engine without user-namespace remapping.
    host_path: bool,
    user: UserIds,
    has_shell: bool,
}

pub struct DockerFileIo {
    options: FileIoOptions,
    facts: Mutex<Option<ContainerFacts>>,
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
        })
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
        if let Some(facts) = &*self.facts.lock().unwrap_or_else(|e| e.into_inner()) {
            if facts.fetched.elapsed() < FACTS_TTL {
                return Ok(facts.clone());
            }
        }
        let container = self.container();
        let inspected = engine
            .call(
                &format!("container '{container}'"),
                engine.docker().inspect_container(container, None),
            )
            .await?;
        let engine_id = inspected.id.clone().unwrap_or_default();
        let previous = self
            .facts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .filter(|f| f.engine_id == engine_id);
        let config = inspected.config.clone().unwrap_or_default();
        let host_config = inspected.host_config.clone().unwrap_or_default();
        let userns = host_config.userns_mode.unwrap_or_default();
        let mounts = bind_mounts(inspected.mounts)
            .into_iter()
            .map(|m| HostMount {
                host: m.source.into(),
                target: m.target,
                readonly: m.readonly,
            })
            .collect();
        let (user, has_shell) = match previous {
            Some(p) => (p.user, p.has_shell),
            None => {
                let files = EngineFiles { engine, container };
                let spec = self
                    .options
                    .user
                    .clone()
                    .or(config.user.clone())
                    .unwrap_or_default();
                let user = resolve_user(&files, &spec).await?;
                (user, path_exists(engine, container, "/bin/sh").await?)
            }
        };
        let facts = ContainerFacts {
            fetched: Instant::now(),
            engine_id,
            working_dir: config
                .working_dir
                .filter(|w| w.starts_with('/'))
                .unwrap_or_else(|| "/".into()),
            running: inspected.state.and_then(|s| s.running).unwrap_or(false),
            mounts,
            host_path: engine.is_local() && (userns.is_empty() || userns == "host"),
            user,
            has_shell,
        };
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

    fn host<'a>(&'a self, facts: &'a ContainerFacts) -> Option<HostFiles<'a>> {
        (facts.host_path && !facts.mounts.is_empty()).then(|| HostFiles {
            mounts: &facts.mounts,
            container: self.container(),
        })
    }

    /// Whether this process can give a host file the container user's ownership.
    fn can_own(user: &UserIds) -> bool {
        // SAFETY: geteuid/getegid have no preconditions.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        euid == 0 || (euid == user.uid && egid == user.gid)
    }

    pub async fn read_file(&self, path: &str) -> Result<Vec<u8>> {
        self.with(|engine, facts| async move {
            let path = self.absolute(&facts, path)?;
            if let Some(host) = self.host(&facts) {
                if let Host::Done(data) = host.read(&path)? {
                    return Ok(data);
                }
            }
            let files = EngineFiles {
                engine: &engine,
                container: self.container(),
            };
            let (real, stat) = files.stat(&path).await?;
            if stat.is_dir() {
                return Err(Error::new(
                    ErrorCode::Eisdir,
                    format!(
                        "{}: illegal operation on a directory",
                        subject(self.container(), &path)
                    ),
                ));
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
            if let Some(host) = self.host(&facts).filter(|_| Self::can_own(user)) {
                if let Host::Done(()) = host.write(&path, &content, user.uid, user.gid)? {
                    return Ok(());
                }
            }
            let files = EngineFiles {
                engine: &engine,
                container: self.container(),
            };
            let (target, mode) = match files.stat_if_exists(&path).await? {
                Some((_, stat)) if stat.is_dir() => {
                    return Err(Error::new(
                        ErrorCode::Eisdir,
                        format!(
                            "{}: illegal operation on a directory",
                            subject(self.container(), &path)
                        ),
                    ))
                }
                Some((real, stat)) => (real, stat.unix_mode()),
                None => (path.clone(), 0o644),
            };
            let Some((dir, name)) = split(&target) else {
                return Err(Error::new(
                    ErrorCode::Eisdir,
                    subject(self.container(), &path),
                ));
            };
            match files.stat_if_exists(&dir).await? {
                Some((real_dir, stat)) if stat.is_dir() => {
                    files
                        .write_file(&real_dir, &name, content, mode, user.owner())
                        .await
                }
                Some(_) => Err(Error::new(
                    ErrorCode::Enotdir,
                    format!("{}: not a directory", subject(self.container(), &dir)),
                )),
                None => Err(Error::new(
                    ErrorCode::Enoent,
                    format!(
                        "{}: no such file or directory",
                        subject(self.container(), &path)
                    ),
                )),
            }
        })
        .await
    }

    pub async fn stat(&self, path: &str) -> Result<Option<FileStat>> {
        self.with(|engine, facts| async move {
            let path = self.absolute(&facts, path)?;
            if let Some(host) = self.host(&facts) {
                if let Host::Done(found) = host.stat(&path)? {
                    return Ok(found.map(|s| FileStat {
                        mtime_ms: s.mtime_ms,
                        size: s.size,
                    }));
                }
            }
            let files = EngineFiles {
                engine: &engine,
                container: self.container(),
            };
            Ok(files.stat_if_exists(&path).await?.map(|(_, s)| FileStat {
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
            if let Some(host) = self.host(&facts) {
                if let Host::Done(found) = host.stat(&path)? {
                    return Ok(found.map(|s| s.is_dir));
                }
            }
            let files = EngineFiles {
                engine: &engine,
                container: self.container(),
            };
            Ok(files.stat_if_exists(&path).await?.map(|(_, s)| s.is_dir()))
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
            if let Some(host) = self.host(&facts).filter(|_| Self::can_own(user)) {
                if let Host::Done(()) = host.make_dirs(&path, user.uid, user.gid)? {
                    return Ok(());
                }
            }
            let files = EngineFiles {
                engine: &engine,
                container: self.container(),
            };
            // Up to the deepest existing ancestor, then one archive of the missing chain.
            let mut missing: Vec<String> = Vec::new();
            let mut current = path.clone();
            let base = loop {
                match files.stat(&current).await {
                    Ok((real, stat)) if stat.is_dir() => break real,
                    Ok(_) if missing.is_empty() => {
                        return Err(Error::new(
                            ErrorCode::Eexist,
                            format!("{}: file already exists", subject(self.container(), &path)),
                        ))
                    }
                    Ok(_) => {
                        return Err(Error::new(
                            ErrorCode::Enotdir,
                            format!("{}: not a directory", subject(self.container(), &current)),
                        ))
                    }
                    Err(err) if err.code == ErrorCode::Enoent => {
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
            if let Some(host) = self.host(&facts) {
                if let Host::Done(mut names) = host.read_dir(&path)? {
                    names.sort();
                    return Ok(names);
                }
            }
            let files = EngineFiles {
                engine: &engine,
                container: self.container(),
            };
            let (real, stat) = files.stat(&path).await?;
            if !stat.is_dir() {
                return Err(Error::new(
                    ErrorCode::Enotdir,
                    format!("{}: not a directory", subject(self.container(), &path)),
                ));
            }
            let mut names = if facts.has_shell && facts.running {
                let request = ExecRequest {
                    command: vec![
                        "/bin/sh".into(),
                        "-c".into(),
                        LIST_SCRIPT.into(),
                        "sh".into(),
                        real.clone(),
                    ],
                    user: Some("0".into()),
                    timeout: Some(engine.timeout()),
                    ..Default::default()
                };
                let out = run_buffered(&engine, self.container(), request).await?;
                if out.exit_code != 0 {
                    return Err(Error::new(
                        ErrorCode::Eacces,
                        format!(
                            "{}: cannot list the directory",
                            subject(self.container(), &path)
                        ),
                    ));
                }
                out.stdout
                    .split(|&b| b == 0)
                    .filter(|n| !n.is_empty())
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .collect()
            } else {
                files.list_dir(&real).await?
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
