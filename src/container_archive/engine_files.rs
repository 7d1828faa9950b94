//! File operations through the Engine API's archive endpoints only — no exec, so they work
//! on images without a shell and on stopped containers. The engine resolves paths inside
//! the container's root, as the container would.

use bollard::query_parameters::{
    ContainerArchiveInfoOptionsBuilder, DownloadFromContainerOptionsBuilder,
    UploadToContainerOptionsBuilder,
};
use bytes::Bytes;
use futures_util::StreamExt;

use super::container_path::{normalize, split};
use super::path_stat::PathStat;
use super::tar_stream::{directories, single_file, EntryOwner, TarReader};
use crate::engine::{from_bollard, Engine};
use crate::error::{Error, ErrorCode, Result};

/// Symlinks followed before giving up with ELOOP (Linux's limit).
const MAX_LINKS: usize = 40;

pub struct EngineFiles<'a> {
    pub engine: &'a Engine,
    pub container: &'a str,
}

pub fn subject(container: &str, path: &str) -> String {
    format!("'{path}' in container '{container}'")
}

/// A stat that found nothing at the path, or found it under a non-directory.
fn is_missing(err: &Error) -> bool {
    matches!(err.code, ErrorCode::Enoent | ErrorCode::Enotdir)
}

/// A file error worded as the kernel words it, without the engine's host paths.
pub fn file_error(code: ErrorCode, container: &str, path: &str) -> Error {
    let text = match code {
        ErrorCode::Enoent => "no such file or directory",
        ErrorCode::Enotdir => "not a directory",
        ErrorCode::Eisdir => "illegal operation on a directory",
        ErrorCode::Eexist => "file already exists",
        ErrorCode::Eacces => "permission denied",
        ErrorCode::Eloop => "too many levels of symbolic links",
        _ => "failed",
    };
    Error::new(code, format!("{}: {text}", subject(container, path)))
}

/// `EFBIG`: `path` holds more than `limit` bytes, the most any read takes from it.
pub fn too_large(container: &str, path: &str, limit: u64) -> Error {
    Error::new(
        ErrorCode::Efbig,
        format!("'{path}' in container '{container}' is larger than {limit} bytes, the most read from it"),
    )
}

/// The file error an engine message describes (Docker's and Podman's wording).
fn code_in_message(message: &str) -> Option<ErrorCode> {
    let lower = message.to_ascii_lowercase();
    [
        ("too many links", ErrorCode::Eloop),
        ("too many levels of symbolic links", ErrorCode::Eloop),
        ("not a directory", ErrorCode::Enotdir),
        ("no such file or directory", ErrorCode::Enoent),
        ("permission denied", ErrorCode::Eacces),
    ]
    .into_iter()
    .find(|(words, _)| lower.contains(words))
    .map(|(_, code)| code)
}

impl EngineFiles<'_> {
    fn refine(&self, err: Error, path: &str) -> Error {
        match err.code {
            ErrorCode::Enoent => file_error(ErrorCode::Enoent, self.container, path),
            ErrorCode::EngineError => match code_in_message(&err.message) {
                Some(code) => file_error(code, self.container, path),
                None => err,
            },
            _ => err,
        }
    }

    /// The path itself (a final symlink is not followed).
    pub async fn lstat(&self, path: &str) -> Result<PathStat> {
        match self.head(path).await {
            Err(err) if err.code == ErrorCode::EngineError => Err(self.classify(path, err).await),
            other => other,
        }
    }

    /// `HEAD` answers some failures (a path through a regular file, a symlink loop) with a
    /// bare 500; a `GET` of the same path says which, in its first chunk.
    async fn classify(&self, path: &str, err: Error) -> Error {
        let options = DownloadFromContainerOptionsBuilder::default()
            .path(path)
            .build();
        let mut stream = self
            .engine
            .docker()
            .download_from_container(self.container, Some(options));
        match tokio::time::timeout(self.engine.timeout(), stream.next()).await {
            Ok(Some(Err(e))) => self.refine(from_bollard(e, &subject(self.container, path)), path),
            _ => err,
        }
    }

    async fn head(&self, path: &str) -> Result<PathStat> {
        let options = ContainerArchiveInfoOptionsBuilder::default()
            .path(path)
            .build();
        let stat = self
            .engine
            .call(
                &subject(self.container, path),
                self.engine
                    .docker()
                    .get_container_archive_info(self.container, Some(options)),
            )
            .await
            .map_err(|e| self.refine(e, path))?;
        Ok(PathStat::from_engine(&stat))
    }

    /// Follows symlinks: the path finally reached, and its stat unless nothing is there
    /// (a dangling link gives the path it points to).
    pub async fn resolve(&self, path: &str) -> Result<(String, Option<PathStat>)> {
        let mut current = normalize(path);
        for _ in 0..MAX_LINKS {
            let stat = match self.lstat(&current).await {
                Ok(stat) => stat,
                Err(err) if err.code == ErrorCode::Enoent => {
                    self.confirm_container().await?;
                    return Ok((current, None));
                }
                Err(err) => return Err(err),
            };
            if !stat.is_symlink() {
                return Ok((current, Some(stat)));
            }
            current = link_destination(&current, &stat.link_target);
        }
        Err(file_error(ErrorCode::Eloop, self.container, path))
    }

    /// `CONTAINER_NOT_FOUND` when the container is gone. `HEAD` answers a removed container
    /// with the same bare 404 as a missing path, so a missing path is only reported once
    /// the container is known to exist.
    async fn confirm_container(&self) -> Result<()> {
        let subject = format!("container '{}'", self.container);
        self.engine
            .inspect_container(self.container, &subject)
            .await
            .map(|_| ())
    }

    /// Follows symlinks: returns the path finally reached and its stat.
    pub async fn stat(&self, path: &str) -> Result<(String, PathStat)> {
        match self.resolve(path).await? {
            (real, Some(stat)) => Ok((real, stat)),
            (real, None) => Err(self.why_missing(path, &real).await),
        }
    }

    /// Podman answers a path through a regular file (or a link loop) with 404, where the
    /// kernel says ENOTDIR (ELOOP): the nearest existing ancestor of `real` tells.
    async fn why_missing(&self, path: &str, real: &str) -> Error {
        let mut current = real.to_string();
        while let Some((parent, _)) = split(&current) {
            match self.lstat(&parent).await {
                Ok(stat) if stat.is_dir() || stat.is_symlink() => break,
                Ok(_) => return file_error(ErrorCode::Enotdir, self.container, path),
                Err(err) if err.code == ErrorCode::Enoent => current = parent,
                Err(err) if err.code == ErrorCode::Eloop => {
                    return file_error(ErrorCode::Eloop, self.container, path)
                }
                Err(_) => break,
            }
        }
        file_error(ErrorCode::Enoent, self.container, path)
    }

    /// `stat`, with a missing path (or one under a file) as `None`.
    pub async fn stat_if_exists(&self, path: &str) -> Result<Option<(String, PathStat)>> {
        match self.stat(path).await {
            Ok(found) => Ok(Some(found)),
            Err(err) if is_missing(&err) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// The archive of `path`, positioned at its content when it is a regular file.
    async fn open_file(
        &self,
        path: &str,
    ) -> Result<(
        TarReader<impl futures_util::Stream<Item = Result<Bytes>> + Unpin + '_>,
        u64,
    )> {
        let what = subject(self.container, path);
        let options = DownloadFromContainerOptionsBuilder::default()
            .path(path)
            .build();
        let engine = self.engine;
        let stream = engine
            .docker()
            .download_from_container(self.container, Some(options))
            .map(move |chunk| chunk.map_err(|e| engine.annotate(from_bollard(e, &what))));
        let mut reader = TarReader::new(Box::pin(stream), subject(self.container, path));
        let first = reader
            .next_entry()
            .await
            .map_err(|e| self.refine(e, path))?;
        match first {
            Some(entry) if entry.is_regular() => Ok((reader, entry.size)),
            Some(entry) if entry.is_dir() => {
                Err(file_error(ErrorCode::Eisdir, self.container, path))
            }
            _ => Err(Error::new(
                ErrorCode::EngineError,
                format!("{}: not a regular file", subject(self.container, path)),
            )),
        }
    }

    /// Streams a regular file's content (at a path with no symlink left to follow).
    pub async fn read_file(&self, path: &str, sink: impl FnMut(Bytes)) -> Result<()> {
        let (mut reader, size) = self.open_file(path).await?;
        reader.read_content(size, sink).await
    }

    /// Reads a whole small file the container controls (e.g. /etc/passwd): `None` when it
    /// does not exist, `EFBIG` when it is over `limit` bytes (its content is not fetched).
    pub async fn read_small(&self, path: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        let (mut reader, size) = match self.open_file(path).await {
            Ok(opened) => opened,
            Err(err) if is_missing(&err) => return Ok(None),
            Err(err) => return Err(err),
        };
        if size > limit {
            return Err(too_large(self.container, path, limit));
        }
        let mut data = Vec::with_capacity(size as usize);
        reader
            .read_content(size, |b| data.extend_from_slice(&b))
            .await?;
        Ok(Some(data))
    }

    /// Names directly inside a directory, from the archive of the directory. Its cost grows
    /// with the whole subtree, so callers prefer a listing exec where a shell exists.
    pub async fn list_dir(&self, path: &str) -> Result<Vec<String>> {
        let what = subject(self.container, path);
        let options = DownloadFromContainerOptionsBuilder::default()
            .path(path)
            .build();
        let engine = self.engine;
        let stream = engine
            .docker()
            .download_from_container(self.container, Some(options))
            .map(|chunk| chunk.map_err(|e| engine.annotate(from_bollard(e, &what))));
        let mut reader = TarReader::new(Box::pin(stream), subject(self.container, path));
        let mut names = Vec::new();
        // The first entry is the directory itself (`name/`, or `/` for the root); its
        // children are the entries one component below it.
        let mut base: Option<String> = None;
        while let Some(entry) = reader
            .next_entry()
            .await
            .map_err(|e| self.refine(e, path))?
        {
            match &base {
                None => base = Some(entry.path.trim_end_matches('/').to_string()),
                Some(base) => {
                    if let Some(name) = child_name(base, &entry.path) {
                        names.push(name.to_string());
                    }
                }
            }
            reader.skip_content(entry.size).await?;
        }
        Ok(names)
    }

    /// Writes `content` as `dir/name` with the given mode and owner, via a one-file archive
    /// extracted into `dir` (which must exist).
    pub async fn write_file(
        &self,
        dir: &str,
        name: &str,
        content: Bytes,
        mode: u32,
        owner: EntryOwner,
    ) -> Result<()> {
        let parts = single_file(name, content, mode, owner)?;
        self.upload(
            dir,
            &format!("{dir}/{name}"),
            futures_util::stream::iter(parts),
        )
        .await
    }

    /// Creates `relative` directories (parents first) inside the existing `base`.
    pub async fn make_dirs(
        &self,
        base: &str,
        relative: &[String],
        owner: EntryOwner,
    ) -> Result<()> {
        let archive = directories(relative, 0o755, owner)?;
        let target = format!(
            "{base}/{}",
            relative.last().map(String::as_str).unwrap_or("")
        );
        self.upload(base, &target, futures_util::stream::iter([archive]))
            .await
    }

    async fn upload(
        &self,
        dir: &str,
        target: &str,
        tar: impl futures_util::Stream<Item = Bytes> + Send + 'static,
    ) -> Result<()> {
        let options = UploadToContainerOptionsBuilder::default()
            .path(dir)
            .no_overwrite_dir_non_dir("true")
            .build();
        let what = subject(self.container, target);
        let engine = self.engine;
        engine
            .call(
                &what,
                engine.docker().upload_to_container(
                    self.container,
                    Some(options),
                    bollard::body_stream(tar),
                ),
            )
            .await
            .map_err(|e| match e.code {
                ErrorCode::EngineError | ErrorCode::InvalidArgument
                    if e.message.contains("read-only") =>
                {
                    Error::new(ErrorCode::Eacces, format!("{what}: read-only file system"))
                }
                ErrorCode::EngineError | ErrorCode::InvalidArgument
                    if e.message.contains("cannot overwrite") =>
                {
                    Error::new(ErrorCode::Eisdir, e.message)
                }
                _ => self.refine(e, target),
            })
    }
}

/// The name of `entry` when it lies directly inside the archived directory `base`.
fn child_name<'e>(base: &str, entry: &'e str) -> Option<&'e str> {
    let rest = entry.strip_prefix(base)?;
    let rest = if base.is_empty() {
        rest
    } else {
        rest.strip_prefix('/')?
    };
    let rest = rest.trim_start_matches('/').trim_end_matches('/');
    (!rest.is_empty() && !rest.contains('/')).then_some(rest)
}

/// Where a symlink at `path` leads, as a container path.
pub fn link_destination(path: &str, target: &str) -> String {
    if target.starts_with('/') {
        normalize(target)
    } else {
        let parent = split(path).map(|(p, _)| p).unwrap_or_else(|| "/".into());
        normalize(&format!("{parent}/{target}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_of_an_archived_directory() {
        assert_eq!(child_name("etc", "etc/hosts"), Some("hosts"));
        assert_eq!(child_name("etc", "etc/ssl/"), Some("ssl"));
        assert_eq!(child_name("etc", "etc/ssl/certs"), None);
        assert_eq!(child_name("etc", "etcetera/x"), None);
        assert_eq!(child_name("", "/dev/"), Some("dev"));
        assert_eq!(child_name("", "/.dockerenv"), Some(".dockerenv"));
        assert_eq!(child_name("", "/dev/console"), None);
        assert_eq!(link_destination("/a/b", "../c"), "/c");
        assert_eq!(link_destination("/a/b", "/x//y"), "/x/y");
    }
}
