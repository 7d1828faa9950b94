//! What a restore or a fork writes into a clone's git directory, which the session
//! controls: the checkpoint's objects it lacks (one pack, checked on the way as export
//! checks objects), HEAD and its branch, the index. libgit2 writes each through a lock
//! file made exclusively and renamed over its target, never followed; locks a git cut
//! short left are removed (unlinked) first, and a reflog libgit2 would append to (it
//! opens those following links) must be a plain file on plain folders, else `GIT`
//! refused before anything is written.

use std::path::Path;

use git2::{Index, Oid, Repository};

use super::checkpoint_store::{CheckpointCommits, CheckpointStore};
use super::CheckpointRecord;
use crate::delivery::{import_objects, Deadline, Limits};
use crate::error::{Error, ErrorCode, Result};

fn refused(clone: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Git,
        format!("restore into {} refused: {why}", clone.display()),
    )
}

/// The reflog files libgit2 appends to for `refname` (and HEAD) must be absent or plain
/// (directories on the way, a regular file at the end): it opens them following links.
fn check_reflog_paths(clone: &Path, git_dir: &Path, refname: Option<&str>) -> Result<()> {
    let mut files = vec!["HEAD".to_string()];
    files.extend(refname.map(str::to_string));
    for file in files {
        let mut at = git_dir.join("logs");
        let parts: Vec<&str> = file.split('/').collect();
        for (n, part) in std::iter::once("").chain(parts.iter().copied()).enumerate() {
            if !part.is_empty() {
                at = at.join(part);
            }
            let last = n == parts.len();
            match std::fs::symlink_metadata(&at) {
                Err(_) => break,
                Ok(m) if last && m.is_file() => {}
                Ok(m) if !last && m.is_dir() => {}
                Ok(_) => return Err(refused(clone, format!("{} is not plain", at.display()))),
            }
        }
    }
    Ok(())
}

/// HEAD at the checkpoint's commit: on `branch` (set there), else detached.
pub fn set_head(
    clone_repo: &Repository,
    clone: &Path,
    record: &CheckpointRecord,
    branch: Option<&str>,
) -> Result<()> {
    let head = record.head_id()?;
    let log = format!("container-isolation: restore of checkpoint {}", record.id);
    if let Some(name) = branch {
        let valid = name.starts_with("refs/heads/") && git2::Reference::is_valid_name(name);
        if !valid {
            return Err(refused(clone, format!("branch {name:?}")));
        }
    }
    check_reflog_paths(clone, clone_repo.path(), branch)?;
    // Locks left by a git the session's end cut short (a symlink is removed, not followed).
    let locks = std::iter::once("HEAD").chain(branch);
    for lock in locks.map(|name| clone_repo.path().join(format!("{name}.lock"))) {
        remove_if_there(&lock)?;
    }
    match branch {
        Some(name) => {
            clone_repo
                .reference(name, head, true, &log)
                .map_err(|e| Error::git("the clone's branch", e))?;
            clone_repo.set_head(name)
        }
        None => clone_repo.set_head_detached(head),
    }
    .map_err(|e| Error::git("the clone's HEAD", e))
}

/// Removes the file (or symlink, not followed) at `path` if there is one.
fn remove_if_there(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::new(
            ErrorCode::Git,
            format!("{}: {e}", path.display()),
        )),
        _ => Ok(()),
    }
}

/// The clone's index replaced by one of `index_tree` (stale locks of the session removed
/// first; the lock file is made exclusively and renamed over, never followed).
pub fn write_index(clone_repo: &Repository, index_tree: Oid) -> Result<()> {
    let git_dir = clone_repo.path();
    for name in ["index.lock", "index"] {
        remove_if_there(&git_dir.join(name))?;
    }
    let tree = clone_repo
        .find_tree(index_tree)
        .map_err(|e| Error::git("the checkpoint's index", e))?;
    let mut index =
        Index::open(&git_dir.join("index")).map_err(|e| Error::git("the clone's index", e))?;
    index
        .read_tree(&tree)
        .and_then(|_| index.write())
        .map_err(|e| Error::git("the clone's index", e))
}

/// The checkpoint's objects the clone lacks, copied from the store.
pub fn import_into(
    store: &CheckpointStore,
    clone_repo: &Repository,
    commits: CheckpointCommits,
    limits: &Limits,
    deadline: Deadline,
) -> Result<()> {
    let store_odb = store
        .repo()
        .odb()
        .map_err(|e| Error::git("the checkpoint store's objects", e))?;
    let clone_odb = clone_repo
        .odb()
        .map_err(|e| Error::git("the clone's objects", e))?;
    for tip in [commits.worktree, commits.index] {
        import_objects(&store_odb, &clone_odb, tip, limits, deadline)?;
    }
    Ok(())
}
