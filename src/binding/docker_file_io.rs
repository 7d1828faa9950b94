//! The `DockerFileIO` class (docs/contract.md §3): converts paths and contents, nothing else.

use std::sync::Arc;

use napi::bindgen_prelude::{Buffer, Either, Undefined};
use napi_derive::napi;

use super::engine::{engine_options, EngineOptions};
use super::error::{sync_error, Code, Outcome};
use super::file_io_values::{content_bytes, stat_value, text_of, FileStat};
use crate::fileio;

/// Options of `new DockerFileIO()`.
#[napi(object, object_to_js = false)]
pub struct DockerFileIoOptions {
    /// The container's name or id.
    pub container: String,
    /// Relative paths resolve against this; default the container's working directory.
    pub cwd: Option<String>,
    /// The user operations act as (a name, `uid`, or `uid:gid`; default the container's
    /// user): with the session agent, permissions are checked as this user by the
    /// container's kernel, and written files belong to them.
    pub user: Option<String>,
    /// Which engine to talk to; default: auto-detected (see `detectEngine`).
    pub engine: Option<EngineOptions>,
    /// Default true: where the engine shares this machine's kernel, answer from the
    /// container's own root (`/proc/<pid>/root`, every path resolved by the kernel inside
    /// it), which is much faster. False: always through the engine's archive endpoints.
    pub host_access: Option<bool>,
    /// Default true: carry operations out through the container's session agent where it
    /// runs (as `user`, tmpfs mounts seen, writes atomic). False: never start the agent.
    pub agent: Option<bool>,
}

/// Magenta's `FileIO` on a container's file system: paths are container paths, relative
/// ones against `cwd`. Rejections carry Node's codes (`ENOENT`, `EISDIR`, `ENOTDIR`,
/// `EEXIST`, `EACCES`, `ELOOP`) or `CONTAINER_NOT_FOUND`; symlinks the container planted
/// never lead outside it.
#[napi(js_name = "DockerFileIO")]
pub struct DockerFileIO {
    inner: Arc<fileio::DockerFileIo>,
}

impl DockerFileIO {
    pub fn from_core(inner: fileio::DockerFileIo) -> Self {
        DockerFileIO {
            inner: Arc::new(inner),
        }
    }
}

#[napi]
impl DockerFileIO {
    /// Checks the options only (`INVALID_ARGUMENT`); the container is first reached by a
    /// call.
    #[napi(constructor)]
    pub fn new(opts: DockerFileIoOptions) -> napi::Result<Self, Code> {
        let options = fileio::FileIoOptions {
            container: opts.container,
            cwd: opts.cwd,
            user: opts.user,
            engine: engine_options(opts.engine).map_err(sync_error)?,
            host_access: opts.host_access.unwrap_or(true),
            agent: opts.agent.unwrap_or(true),
        };
        Ok(DockerFileIO::from_core(
            fileio::DockerFileIo::new(options).map_err(sync_error)?,
        ))
    }

    /// UTF-8; invalid sequences are replaced, as Node's `readFile(path, 'utf8')` does.
    #[napi(ts_return_type = "Promise<string>")]
    pub async fn read_file(&self, path: String) -> Outcome<String> {
        self.inner.read_file(&path).await.map(text_of).into()
    }

    /// The file's bytes.
    #[napi(ts_return_type = "Promise<Buffer>")]
    pub async fn read_binary_file(&self, path: String) -> Outcome<Buffer> {
        self.inner.read_file(&path).await.map(Buffer::from).into()
    }

    /// Creates or replaces the file (parent directories must exist), owned by `user`;
    /// through the agent atomically (old or new content, never a mix).
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn write_file(&self, path: String, content: Either<String, Buffer>) -> Outcome<()> {
        self.inner
            .write_file(&path, content_bytes(content))
            .await
            .into()
    }

    /// File or directory (symlinks followed); never rejects for a missing path.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub async fn file_exists(&self, path: String) -> Outcome<bool> {
        self.inner.file_exists(&path).await.into()
    }

    /// Recursive, like `mkdir -p`.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn mkdir(&self, path: String) -> Outcome<()> {
        self.inner.mkdir(&path).await.into()
    }

    /// `undefined` for a missing path.
    #[napi(ts_return_type = "Promise<FileStat | undefined>")]
    pub async fn stat(&self, path: String) -> Outcome<Either<FileStat, Undefined>> {
        self.inner
            .stat(&path)
            .await
            .map(|found| stat_value(found.map(|s| (s.mtime_ms, s.size))))
            .into()
    }

    /// Names, dotfiles included, sorted.
    #[napi(ts_return_type = "Promise<string[]>")]
    pub async fn readdir(&self, path: String) -> Outcome<Vec<String>> {
        self.inner.read_dir(&path).await.into()
    }

    /// Whether the path is a directory (symlinks followed); never rejects for a missing
    /// path.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub async fn is_directory(&self, path: String) -> Outcome<bool> {
        self.inner.is_directory(&path).await.into()
    }
}
