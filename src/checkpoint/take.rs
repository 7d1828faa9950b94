//! The repository half of a checkpoint: the clone, opened as hostile input exactly as
//! `export` opens it, read into the session's store. HEAD's history is copied and checked
//! as export copies it; the index becomes a tree and the work tree (as `git add -A` would
//! record it, ignored files left out as export's snapshot leaves them) another, both made
//! in a repository in memory that reads the clone's objects, then each wrapped in a commit
//! on HEAD and copied into the store through the same checks. Nothing in the clone is
//! written.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository, Signature, Time};

use super::checkpoint_store::{CheckpointCommits, CheckpointStore};
use super::CheckpointRecord;
use crate::delivery::{
    import_objects, memory_repo, open_clone, run_bounded, snapshot, CommitAs, Deadline, Limits,
};
use crate::error::{Error, Result};

/// Who the store's commits are by: the host, at `now`.
pub fn host_signature(now_ms: i64) -> Result<Signature<'static>> {
    Signature::new(
        "container-isolation",
        "checkpoint@container-isolation.invalid",
        &Time::new(now_ms.div_euclid(1000), 0),
    )
    .map_err(|e| Error::git("the checkpoint's signature", e))
}

/// A new checkpoint id: 12 lowercase hex digits.
fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_string()
}

/// The branch HEAD is on (`refs/heads/…`), `None` when detached.
pub fn head_branch(clone_repo: &Repository) -> Result<Option<String>> {
    let head = clone_repo
        .find_reference("HEAD")
        .map_err(|e| Error::git("the clone's HEAD", e))?;
    Ok(head
        .symbolic_target()
        .ok()
        .flatten()
        .filter(|t| t.starts_with("refs/heads/"))
        .map(str::to_string))
}

/// The commits a checkpoint keeps, made in `mem` (a memory repository over the clone's
/// objects); HEAD's history already in the store.
fn make_commits(
    clone_repo: &Repository,
    clone: &Path,
    mem: &Repository,
    head_id: Oid,
    sig: &Signature<'static>,
    limits: &Limits,
    deadline: Deadline,
) -> Result<(CheckpointCommits, Oid, Oid)> {
    let mut index = clone_repo
        .index()
        .map_err(|e| Error::git("the clone's index", e))?;
    let index_tree = index
        .write_tree_to(mem)
        .map_err(|e| Error::git("the clone's index as a tree", e))?;
    let head = clone_repo
        .find_commit(head_id)
        .map_err(|e| Error::git("the clone's HEAD", e))?;
    let on_head = |tree: Oid, message: &str| -> Result<Oid> {
        let tree = mem
            .find_tree(tree)
            .map_err(|e| Error::git("checkpoint tree", e))?;
        let parent = mem
            .find_commit(head_id)
            .map_err(|e| Error::git("HEAD in memory", e))?;
        mem.commit(None, sig, sig, message, &tree, &[&parent])
            .map_err(|e| Error::git("checkpoint commit", e))
    };
    let index_commit = on_head(index_tree, "checkpoint: index")?;
    let by = CommitAs {
        author: sig,
        message: "checkpoint: work tree",
    };
    let worktree_commit = match snapshot(clone_repo, clone, &head, mem, by, limits, deadline)? {
        Some(commit) => commit,
        None => on_head(head.tree_id(), "checkpoint: work tree")?,
    };
    let worktree_tree = mem
        .find_commit(worktree_commit)
        .map_err(|e| Error::git("checkpoint commit", e))?
        .tree_id();
    let commits = CheckpointCommits {
        head: head_id,
        index: index_commit,
        worktree: worktree_commit,
    };
    Ok((commits, index_tree, worktree_tree))
}

/// The clone's state, read and checked; its objects copied into `store`.
fn take_now(
    store: &CheckpointStore,
    clone: &Path,
    label: Option<String>,
    limits: &Limits,
    deadline: Deadline,
) -> Result<(CheckpointRecord, CheckpointCommits)> {
    let clone_repo = open_clone(clone, limits)?;
    // The id only: the walk checks the commit before libgit2 parses it.
    let head_id = clone_repo
        .refname_to_id("HEAD")
        .map_err(|e| Error::git("the clone's HEAD", e))?;
    let branch = head_branch(&clone_repo)?;
    let clone_odb = clone_repo
        .odb()
        .map_err(|e| Error::git("the clone's objects", e))?;
    let store_odb = store
        .repo()
        .odb()
        .map_err(|e| Error::git("the checkpoint store's objects", e))?;
    import_objects(&clone_odb, &store_odb, head_id, limits, deadline)?;
    let created_at_ms = chrono::Utc::now().timestamp_millis();
    let sig = host_signature(created_at_ms)?;
    let mem = memory_repo(&clone_repo)?;
    let (commits, index_tree, worktree_tree) =
        make_commits(&clone_repo, clone, &mem, head_id, &sig, limits, deadline)?;
    let mem_odb = mem.odb().map_err(|e| Error::git("objects in memory", e))?;
    for tip in [commits.index, commits.worktree] {
        import_objects(&mem_odb, &store_odb, tip, limits, deadline)?;
    }
    let record = CheckpointRecord {
        id: new_id(),
        label,
        created_at_ms,
        head: head_id.to_string(),
        branch,
        index_tree: index_tree.to_string(),
        worktree_tree: worktree_tree.to_string(),
        image: None,
        bytes: None,
    };
    Ok((record, commits))
}

/// Where a checkpoint is taken from and kept.
#[derive(Debug, Clone)]
pub struct TakeRequest {
    pub base_dir: PathBuf,
    pub session: String,
    pub clone: PathBuf,
    pub label: Option<String>,
    pub limits: Limits,
}

/// The repository half of a checkpoint of `request.clone`, kept in the session's store,
/// on a thread of its own within `limits.timeout` (`TIMEOUT`: no checkpoint recorded).
pub fn take_checkpoint(request: TakeRequest) -> Result<CheckpointRecord> {
    let timeout = request.limits.timeout;
    run_bounded("checkpoint", timeout, move |commitment| {
        let deadline = Deadline::after(request.limits.timeout);
        let store = CheckpointStore::open(&request.base_dir, &request.session)?;
        let (record, commits) = take_now(
            &store,
            &request.clone,
            request.label,
            &request.limits,
            deadline,
        )?;
        commitment.write(&deadline, "checkpoint", || {
            store.save(&record, commits)?;
            Ok(record)
        })
    })
}
