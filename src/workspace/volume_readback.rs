//! A `volume` session's repository read back to the host before the host reads it
//! (`changes`, `export`, `push`, `destroy`'s trash): the container's workspace folder
//! downloaded (stopped containers answer too), extracted as untrusted input into a fresh
//! directory beside the clone, and exchanged with the clone in one rename. Without a
//! container (removed, not yet made again) the copy last read back stands.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::session_volume::session_volume;
use super::workspace_record::WorkspaceRecord;
use super::workspaces::{blocking_error, Workspaces};
use crate::error::{Error, ErrorCode, Result};
use crate::tar_extract::ExtractLimits;
use crate::workspace_volume::download_tree;

fn io_error(what: &Path, err: std::io::Error) -> Error {
    Error::new(ErrorCode::Eacces, format!("{}: {err}", what.display()))
}

/// Puts `fresh` at `clone` in one step; the old clone is then at `fresh`.
fn exchange(fresh: &Path, clone: &Path) -> std::io::Result<()> {
    let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (a, b) = (c(fresh)?, c(clone)?);
    // SAFETY: NUL-terminated paths; renameat2 with RENAME_EXCHANGE swaps two names.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    match rc {
        0 => Ok(()),
        _ => {
            let err = std::io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::ENOENT) => std::fs::rename(fresh, clone),
                _ => Err(err),
            }
        }
    }
}

fn remove_tree(path: PathBuf) {
    if let Err(err) = std::fs::remove_dir_all(&path) {
        tracing::warn!("{}: not removed: {err}", path.display());
    }
}

impl Workspaces {
    /// Held while a session's clone is read back and read: one exchange at a time.
    pub(super) fn read_lock(&self, session_id: &str) -> std::sync::Arc<tokio::sync::Mutex<()>> {
        self.lock_for(&format!("{session_id}/read-back"))
    }

    /// For a `volume` session whose container exists: its repository as the host clone.
    pub(super) async fn read_back(&self, record: &WorkspaceRecord) -> Result<()> {
        if session_volume(record)?.is_none() {
            return Ok(());
        }
        if self.state_of(&record.container_id).await? == "missing" {
            return Ok(());
        }
        let clone = PathBuf::from(&record.clone_path);
        let parent = clone.parent().unwrap_or(Path::new("/")).to_path_buf();
        let fresh = parent.join(format!(
            ".readback-{}-{}",
            record.session_id,
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&parent).map_err(|e| io_error(&parent, e))?;
        std::fs::create_dir(&fresh).map_err(|e| io_error(&fresh, e))?;
        let engine = self.runtime.engine().await?;
        let mount = record
            .settings
            .as_ref()
            .map(|s| s.mount_path.clone())
            .unwrap_or_else(|| record.container_mount_path.clone());
        let downloaded = download_tree(
            &engine,
            &record.container_id,
            &mount,
            fresh.clone(),
            ExtractLimits::default(),
        )
        .await;
        let swapped = tokio::task::spawn_blocking(move || {
            let result = match downloaded {
                Ok(_) => exchange(&fresh, &clone).map_err(|e| io_error(&clone, e)),
                Err(err) => Err(err),
            };
            remove_tree(fresh);
            result
        })
        .await
        .map_err(blocking_error)?;
        swapped
    }
}
