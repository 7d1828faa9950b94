//! A clone whose `.git` the session removed or replaced (by a gitfile, a symlink, anything
//! but a directory) given a git directory again before a restore: one made fresh beside
//! the clone (in the folder of clones, which the host owns) with the checkpoint's objects
//! from the store and HEAD on the checkpoint's branch; what stood at `.git` is unlinked
//! (a symlink itself, never what it points to) and the new one renamed into its place.
//! As a fork's, the new git directory has HEAD's history only: no remote, no other branch
//! or tag.

use std::path::Path;

use git2::Repository;

use super::checkpoint_store::{CheckpointCommits, CheckpointStore};
use super::clone_git_dir::{import_into, set_head};
use super::CheckpointRecord;
use crate::delivery::{Deadline, Limits};
use crate::error::{Error, ErrorCode, Result};

fn failed(path: &Path, err: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::Git, format!("{}: {err}", path.display()))
}

/// What `rebuild_git_dir` needs of the checkpoint.
pub struct Checkpoint<'a> {
    pub store: &'a CheckpointStore,
    pub record: &'a CheckpointRecord,
    pub commits: CheckpointCommits,
}

/// Gives `clone` a new git directory when its `.git` is not a directory; whether it did.
/// The clone itself must be a directory (not a symlink to one).
pub fn rebuild_git_dir(
    clone: &Path,
    checkpoint: Checkpoint,
    limits: &Limits,
    deadline: Deadline,
) -> Result<bool> {
    match std::fs::symlink_metadata(clone) {
        Ok(m) if m.is_dir() => {}
        _ => return Ok(false), // refused as it is by the restore's own checks
    }
    let git_dir = clone.join(".git");
    if std::fs::symlink_metadata(&git_dir).is_ok_and(|m| m.is_dir()) {
        return Ok(false);
    }
    let parent = clone
        .parent()
        .ok_or_else(|| failed(clone, "no parent folder"))?;
    let temp = parent.join(format!(".tmp-git-{}", uuid::Uuid::new_v4().simple()));
    let built = build(&temp, clone, checkpoint, limits, deadline).and_then(|_| {
        // A directory is not renamed over a file: what stands there is unlinked first.
        match std::fs::remove_file(&git_dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(failed(&git_dir, e)),
            _ => {}
        }
        std::fs::rename(temp.join(".git"), &git_dir).map_err(|e| failed(&git_dir, e))
    });
    let _ = std::fs::remove_dir_all(&temp);
    built.map(|_| true)
}

fn build(
    temp: &Path,
    clone: &Path,
    checkpoint: Checkpoint,
    limits: &Limits,
    deadline: Deadline,
) -> Result<()> {
    let repo =
        Repository::init(temp).map_err(|e| Error::git("the clone's new git directory", e))?;
    let commits = checkpoint.commits;
    import_into(checkpoint.store, &repo, commits, limits, deadline)?;
    let record = checkpoint.record;
    set_head(&repo, clone, record, record.branch.as_deref())
}
