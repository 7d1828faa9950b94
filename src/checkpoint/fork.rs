//! A new clone for a new session from a checkpoint: a repository made fresh beside the
//! session clones, given the checkpoint's objects from the store (a pack of its own: no
//! file is shared with the parent clone or the store), its HEAD, work tree and index, then
//! renamed into place whole. HEAD's branch takes the new session's name when the
//! checkpoint was on a branch. The fork has HEAD's history only: no remote, no other
//! branch or tag of the parent.

use std::path::{Path, PathBuf};

use git2::Repository;

use super::checkpoint_store::CheckpointStore;
use super::clone_git_dir::{import_into, set_head, write_index};
use super::restore::apply_tree_diff;
use super::take::{take_checkpoint, TakeRequest};
use crate::delivery::{run_bounded, Deadline, Limits};
use crate::error::{Error, ErrorCode, Result};

/// Which checkpoint of which session becomes which new clone.
#[derive(Debug, Clone)]
pub struct ForkRequest {
    pub base_dir: PathBuf,
    pub session: String,
    pub checkpoint: String,
    /// Where the new clone goes (`CloneManager::clone_path` of the new session).
    pub new_clone: PathBuf,
    /// The branch HEAD goes on when the checkpoint's HEAD was on one (`refs/heads/…`).
    pub new_branch: String,
    pub limits: Limits,
}

fn build(request: &ForkRequest, dir: &Path, deadline: Deadline) -> Result<()> {
    let store = CheckpointStore::open(&request.base_dir, &request.session)?;
    let record = store.get(&request.checkpoint)?;
    let commits = store.commits(&record.id)?;
    let repo = Repository::init(dir).map_err(|e| Error::git("the fork's repository", e))?;
    import_into(&store, &repo, commits, &request.limits, deadline)?;
    let branch = record.branch.as_ref().map(|_| request.new_branch.as_str());
    set_head(&repo, dir, &record, branch)?;
    apply_tree_diff(dir, &repo, None, record.worktree_tree_id()?)?;
    write_index(&repo, record.index_tree_id()?)
}

fn fork_now(request: &ForkRequest, deadline: Deadline) -> Result<PathBuf> {
    let target = &request.new_clone;
    if target.exists() {
        return Err(Error::new(
            ErrorCode::Eexist,
            format!("{}: the new session's clone exists", target.display()),
        ));
    }
    let parent = target.parent().ok_or_else(|| {
        Error::invalid_argument(format!("{}: no parent folder", target.display()))
    })?;
    std::fs::create_dir_all(parent)
        .map_err(|e| Error::new(ErrorCode::Git, format!("{}: {e}", parent.display())))?;
    let temp = parent.join(format!(".tmp-fork-{}", uuid::Uuid::new_v4().simple()));
    let built = build(request, &temp, deadline).and_then(|_| {
        std::fs::rename(&temp, target)
            .map_err(|e| Error::new(ErrorCode::Git, format!("{}: {e}", target.display())))
    });
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&temp);
        return Err(e);
    }
    Ok(target.clone())
}

/// The new clone, made from the checkpoint on a thread of its own within `limits.timeout`.
pub fn fork_checkpoint(request: ForkRequest) -> Result<PathBuf> {
    let timeout = request.limits.timeout;
    run_bounded("fork", timeout, move |commitment| {
        let deadline = Deadline::after(request.limits.timeout);
        commitment.write(&deadline, "fork", || fork_now(&request, deadline))
    })
}

/// A fork of the clone as it is now: a checkpoint taken, forked, and deleted again (its
/// objects stay in the parent's store).
pub fn fork_current(take: TakeRequest, new_clone: PathBuf, new_branch: String) -> Result<PathBuf> {
    let (base_dir, session, limits) = (take.base_dir.clone(), take.session.clone(), take.limits);
    let record = take_checkpoint(take)?;
    let forked = fork_checkpoint(ForkRequest {
        base_dir: base_dir.clone(),
        session: session.clone(),
        checkpoint: record.id.clone(),
        new_clone,
        new_branch,
        limits,
    });
    CheckpointStore::open(&base_dir, &session)?.delete(&record.id)?;
    forked
}
