//! The `KubernetesFileIO` class (docs/contract.md §8): Magenta's `FileIO` on a session Pod,
//! made by `KubernetesRuntime.fileIO`; converts paths and contents, nothing else.

use std::sync::Arc;

use napi::bindgen_prelude::{Buffer, Either, Undefined};
use napi_derive::napi;

use super::error::Outcome;
use super::file_io_values::{content_bytes, stat_value, text_of, FileStat};
use crate::kubernetes::PodFiles;

/// Options of `KubernetesRuntime.fileIO()`.
#[napi(object, object_to_js = false)]
pub struct PodFileIoOptions {
    /// Relative paths resolve against this; default the container's working directory.
    pub cwd: Option<String>,
    /// The user operations act as (a name, `uid`, or `uid:gid`; default the Pod's user):
    /// permissions are checked as this user by the container's kernel, and written files
    /// belong to them.
    pub user: Option<String>,
}

/// Magenta's `FileIO` on a session Pod's file system, every operation through the Pod's
/// session agent: paths are container paths, relative ones against `cwd`. Rejections carry
/// Node's codes (`ENOENT`, `EISDIR`, `ENOTDIR`, `EEXIST`, `EACCES`, `ELOOP`),
/// `CONTAINER_NOT_FOUND`, `CONTAINER_NOT_RUNNING`, or `UNSUPPORTED` where the agent cannot
/// serve the Pod (the reason said).
#[napi(js_name = "KubernetesFileIO")]
pub struct KubernetesFileIO {
    inner: Arc<PodFiles>,
}

impl KubernetesFileIO {
    pub fn from_core(inner: PodFiles) -> Self {
        KubernetesFileIO {
            inner: Arc::new(inner),
        }
    }
}

#[napi]
impl KubernetesFileIO {
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

    /// Creates or replaces the file (parent directories must exist) atomically, owned by
    /// `user`.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn write_file(&self, path: String, content: Either<String, Buffer>) -> Outcome<()> {
        self.inner
            .write_file(&path, &content_bytes(content))
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
            .map(|found| stat_value(found.map(|(s, _)| (s.mtime_ms, s.size))))
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
