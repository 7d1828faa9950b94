//! The operations of `DockerFileIO` (Magenta's `FileIO` methods and the directories
//! hosts ask for), each routed by `DockerFileIo`'s paths: the host file system, the
//! session agent, the engine.

use bytes::Bytes;

use super::docker_file_io::{DockerFileIo, FileStat};
use super::engine_paths;
use super::host_files::Host;
use crate::agent::{AgentReply, FileKind, Stat};
use crate::container_archive::file_error;
use crate::error::{ErrorCode, Result};

impl DockerFileIo {
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
        Ok(self.lookup(path).await?.map(|(stat, _)| stat))
    }

    /// `Some(is_dir)` for an existing path (symlinks followed), `None` for a missing one.
    async fn kind(&self, path: &str) -> Result<Option<bool>> {
        Ok(self.lookup(path).await?.map(|(_, is_dir)| is_dir))
    }

    /// An existing path's stat and whether it is a directory (symlinks followed), from the
    /// first of host, agent and engine that answers; `None` for a missing path.
    async fn lookup(&self, path: &str) -> Result<Option<(FileStat, bool)>> {
        self.with(|engine, facts| async move {
            let path = self.absolute(&facts, path)?;
            let at = path.clone();
            if let Host::Done(found) = self
                .on_host(&facts, &path, false, move |h| h.stat(&at))
                .await?
            {
                return Ok(found.map(|s| {
                    (
                        FileStat {
                            mtime_ms: s.mtime_ms,
                            size: s.size,
                        },
                        s.is_dir,
                    )
                }));
            }
            let p = &path;
            let on_agent = self
                .on_agent(&facts, move |files| async move {
                    Ok(Host::Done(files.stat(p, true).await?.map(|s| {
                        let mtime_ms = s.mtime_sec as f64 * 1000.0 + s.mtime_nsec as f64 / 1e6;
                        (
                            FileStat {
                                mtime_ms,
                                size: s.size,
                            },
                            s.kind == FileKind::Dir,
                        )
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
            Ok(found.map(|(_, s)| {
                (
                    FileStat {
                        mtime_ms: s.mtime_ms,
                        size: s.size,
                    },
                    s.is_dir(),
                )
            }))
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
