//! The `CloneManager` class (docs/contract.md §5); git work runs on the blocking pool.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::{Either, Undefined};
use napi_derive::napi;

use super::error::Outcome;
use crate::base_dir::resolve_base_dir;
use crate::clone;
use crate::error::{Error, ErrorCode, Result};

/// Options of `new CloneManager()`.
#[napi(object, object_to_js = false)]
pub struct CloneManagerOptions {
    /// Default `$CONTAINER_ISOLATION_HOME`, else `~/.container-isolation`.
    pub base_dir: Option<String>,
}

/// Options of `CloneManager.emptyTrash`.
#[napi(object, object_to_js = false)]
pub struct EmptyTrashOptions {
    /// Only entries at least this old; default 0 (everything).
    pub older_than_ms: Option<f64>,
}

/// One git clone per agent session under `${baseDir}/sessions/session-<id>`: a full
/// repository with its own `.git` (objects hard-linked from the project where the file
/// system allows), `origin` pointing at the project, on branch `session-<id>` from the
/// project's HEAD commit. Uncommitted changes in the project are not carried over.
///
/// The clone holds no absolute path to itself, so it can be bind-mounted anywhere. Git
/// refuses a repository owned by another uid ("dubious ownership"): a container user other
/// than the clone's owner needs `git config --global --add safe.directory <mount path>`.
#[napi]
pub struct CloneManager {
    inner: Arc<clone::CloneManager>,
}

/// Runs blocking work off the event loop and the async workers.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::new(ErrorCode::Git, format!("background task failed: {e}")))?
}

#[napi]
impl CloneManager {
    /// Touches nothing on disk until a method is called.
    #[napi(constructor)]
    pub fn new(opts: Option<CloneManagerOptions>) -> Self {
        let base = resolve_base_dir(opts.and_then(|o| o.base_dir).as_deref());
        CloneManager {
            inner: Arc::new(clone::CloneManager::new(base)),
        }
    }

    /// `${baseDir}/sessions/session-<id>` on branch `session-<id>` from the project's HEAD
    /// (uncommitted changes are not carried over). Idempotent: an existing clone is returned
    /// unchanged. A project that is not a repository, or has no commit yet, first gets one
    /// commit of everything (and a default `.gitignore` if it has none).
    #[napi(ts_return_type = "Promise<string>")]
    pub async fn create_session_clone(
        &self,
        project_dir: String,
        session_id: String,
    ) -> Outcome<String> {
        let inner = self.inner.clone();
        blocking(move || inner.create_session_clone(Path::new(&project_dir), &session_id))
            .await
            .map(|p| p.to_string_lossy().into_owned())
            .into()
    }

    /// Moves the clone to `${baseDir}/.trash/<timestamp>/` (with the session's own project
    /// under `baseDir/repositories`, a remote's clone or a folder's snapshot, if it has
    /// one); resolves with the clone's trash path.
    #[napi(ts_return_type = "Promise<string | undefined>")]
    pub async fn remove_session_clone(
        &self,
        session_id: String,
    ) -> Outcome<Either<String, Undefined>> {
        let inner = self.inner.clone();
        blocking(move || clone::remove_session_clone_and_project(&inner, &session_id))
            .await
            .map(|p| match p {
                Some(p) => Either::A(p.to_string_lossy().into_owned()),
                None => Either::B(()),
            })
            .into()
    }

    /// Paths of the session clones under `${baseDir}/sessions`.
    #[napi(ts_return_type = "Promise<string[]>")]
    pub async fn list_session_clones(&self) -> Outcome<Vec<String>> {
        let inner = self.inner.clone();
        blocking(move || inner.list_session_clones()).await.into()
    }

    /// Deletes trash entries at least `olderThanMs` old; resolves with the deleted paths.
    #[napi(ts_return_type = "Promise<string[]>")]
    pub async fn empty_trash(&self, opts: Option<EmptyTrashOptions>) -> Outcome<Vec<String>> {
        let inner = self.inner.clone();
        let ms = opts.and_then(|o| o.older_than_ms).unwrap_or(0.0).max(0.0);
        blocking(move || inner.empty_trash(Duration::from_millis(ms as u64)))
            .await
            .map(|paths| {
                paths
                    .into_iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect()
            })
            .into()
    }

    /// Whether `dir` itself is the root of a git repository (a directory inside one is not).
    #[napi]
    pub fn is_git_repo(&self, dir: String) -> bool {
        clone::CloneManager::is_git_repo(Path::new(&dir))
    }
}
