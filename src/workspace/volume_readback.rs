//! A `volume` session's repository read back to the host before the host reads it
//! (`changes`, `export`, `push`, `destroy`'s trash): the container's workspace folder
//! downloaded (stopped containers answer too), extracted as untrusted input into a fresh
//! directory beside the clone, and exchanged with the clone in one rename. Without a
//! container (removed, not yet made again) a reader container is made for the read.

use std::path::{Path, PathBuf};

use super::session_volume::{session_volume, volume_labels};
use super::workspace_record::WorkspaceRecord;
use super::workspaces::{blocking_error, Workspaces};
use crate::error::{Error, ErrorCode, Result};
use crate::fileio::fd_ops::swap_paths;
use crate::runtime::Lifetime;
use crate::tar_extract::ExtractLimits;
use crate::workspace_volume::{download_tree, read_volume, VolumeRead};

fn io_error(what: &Path, err: std::io::Error) -> Error {
    Error::new(ErrorCode::Eacces, format!("{}: {err}", what.display()))
}

/// Puts `fresh` at `clone` in one step; the old clone is then at `fresh`. Where `clone` is
/// not there (yet), `fresh` is simply renamed to it.
fn exchange(fresh: &Path, clone: &Path) -> std::io::Result<()> {
    match swap_paths(fresh, clone) {
        Err(err) if err.raw_os_error() == Some(libc::ENOENT) => std::fs::rename(fresh, clone),
        other => other,
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
        let missing = self.state_of(&record.container_id).await? == "missing";
        self.read_back_with(record, missing).await
    }

    /// As `read_back`, always through a reader container: for a session whose container is
    /// paused (a checkpoint's), which an archive call may not answer.
    pub(super) async fn read_back_beside(&self, record: &WorkspaceRecord) -> Result<()> {
        self.read_back_with(record, true).await
    }

    async fn read_back_with(&self, record: &WorkspaceRecord, missing: bool) -> Result<()> {
        let Some(volume) = session_volume(record)? else {
            return Ok(());
        };
        let clone = PathBuf::from(&record.clone_path);
        let fresh = fresh_beside(&clone, &record.session_id)?;
        let engine = self.runtime.engine().await?;
        let mount = record
            .settings
            .as_ref()
            .map(|s| s.mount_path.clone())
            .unwrap_or_else(|| record.container_mount_path.clone());
        let limits = ExtractLimits::default();
        let downloaded = match missing {
            false => {
                download_tree(&engine, &record.container_id, &mount, fresh.clone(), limits).await
            }
            true => {
                let base_dir = self.runtime.base_dir().to_string_lossy();
                let read = VolumeRead {
                    volume,
                    mount_path: &mount,
                    image: record
                        .settings
                        .as_ref()
                        .map(|s| s.run_image())
                        .unwrap_or(&record.image),
                    labels: volume_labels(record, Lifetime::Process, &base_dir),
                };
                read_volume(&engine, read, fresh.clone(), limits).await
            }
        };
        let swapped = tokio::task::spawn_blocking(move || match downloaded {
            Ok(_) => replace_clone(fresh, &clone),
            Err(err) => {
                remove_tree(fresh);
                Err(err)
            }
        })
        .await
        .map_err(blocking_error)?;
        swapped
    }
}

/// A fresh folder beside `clone` (where a read-back is extracted); made empty.
pub(crate) fn fresh_beside(clone: &Path, session_id: &str) -> Result<PathBuf> {
    let parent = clone.parent().unwrap_or(Path::new("/")).to_path_buf();
    let fresh = parent.join(format!(
        ".readback-{session_id}-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&parent).map_err(|e| io_error(&parent, e))?;
    std::fs::create_dir(&fresh).map_err(|e| io_error(&fresh, e))?;
    Ok(fresh)
}

/// Puts the read-back `fresh` at `clone` in one rename and removes what was there (blocking).
pub(crate) fn replace_clone(fresh: PathBuf, clone: &Path) -> Result<()> {
    let result = exchange(&fresh, clone).map_err(|e| io_error(clone, e));
    remove_tree(fresh);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchange_swaps_the_two_folders_or_renames_where_there_is_no_clone() {
        let base = std::env::temp_dir().join(format!("ci-rb-{}", uuid::Uuid::new_v4()));
        let (fresh, clone) = (base.join("fresh"), base.join("clone"));
        std::fs::create_dir_all(&fresh).unwrap();
        std::fs::create_dir_all(&clone).unwrap();
        std::fs::write(fresh.join("new"), "n").unwrap();
        std::fs::write(clone.join("old"), "o").unwrap();
        exchange(&fresh, &clone).unwrap();
        assert!(clone.join("new").is_file() && !clone.join("old").exists());
        assert!(fresh.join("old").is_file());
        std::fs::remove_dir_all(&clone).unwrap();
        exchange(&fresh, &clone).unwrap();
        assert!(clone.join("old").is_file() && !fresh.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
