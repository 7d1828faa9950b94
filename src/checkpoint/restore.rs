//! A clone put back to a checkpoint: a git directory the session removed or replaced made
//! again (`git_dir_rebuild`); the objects it lacks (history rewritten, `git gc`)
//! copied back from the store; HEAD's branch set back to the checkpoint's commit and HEAD
//! onto it (or HEAD detached there); the work tree made to record the checkpoint's tree
//! under `git add -A` (its current tree, read as a snapshot reads it, compared with the
//! checkpoint's, and each difference written or removed without following a symlink);
//! then the index replaced by the checkpoint's. Ignored files are left as they are. The
//! session's processes must be ended first (the caller's part): the clone is read and
//! written as hostile input, but a writer racing the restore could still change it after.

use std::path::{Path, PathBuf};

use git2::{Delta, Index, ObjectType, Oid, Repository};

use super::checkpoint_store::CheckpointStore;
use super::clone_git_dir::{import_into, set_head, write_index};
use super::git_dir_rebuild::{rebuild_git_dir, Checkpoint};
use super::take::host_signature;
use super::worktree_write::{NewEntry, WorktreeWriter};
use super::CheckpointRecord;
use crate::delivery::{memory_repo, open_clone, run_bounded, snapshot, CommitAs, Deadline, Limits};
use crate::error::{Error, Result};

/// What a restore changed in the work tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub checkpoint: CheckpointRecord,
    pub files_written: usize,
    pub files_removed: usize,
}

/// The tree `git add -A` would record for the clone now, made in `mem`: read as export's
/// snapshot reads it, through the clone's index (whose file stats spare reading unchanged
/// files), or through one of HEAD's tree alone when the session left an index libgit2
/// cannot read (every file is then read and hashed).
fn current_tree(
    clone_repo: &Repository,
    clone: &Path,
    mem: &Repository,
    head: Oid,
    limits: &Limits,
    deadline: Deadline,
) -> Result<Oid> {
    let head = clone_repo
        .find_commit(head)
        .map_err(|e| Error::git("the checkpoint's HEAD", e))?;
    if clone_repo.index().is_err() {
        let tree = head.tree().map_err(|e| Error::git("HEAD's tree", e))?;
        let mut index = Index::new().map_err(|e| Error::git("an index in memory", e))?;
        index
            .read_tree(&tree)
            .map_err(|e| Error::git("an index in memory", e))?;
        clone_repo
            .set_index(&mut index)
            .map_err(|e| Error::git("an index in memory", e))?;
    }
    let sig = host_signature(chrono::Utc::now().timestamp_millis())?;
    let by = CommitAs {
        author: &sig,
        message: "restore: the work tree before",
    };
    match snapshot(clone_repo, clone, &head, mem, by, limits, deadline)? {
        Some(commit) => mem
            .find_commit(commit)
            .map(|c| c.tree_id())
            .map_err(|e| Error::git("the work tree before", e)),
        None => Ok(head.tree_id()),
    }
}

/// Writes and removes what differs between `from` (none: an empty work tree) and `to`
/// (trees `mem` reads); how many paths were written and removed. Not bounded by the
/// deadline: a restore once begun ends, rather than leave the clone half restored.
pub fn apply_tree_diff(
    clone: &Path,
    mem: &Repository,
    from: Option<Oid>,
    to: Oid,
) -> Result<(usize, usize)> {
    let tree = |id| {
        mem.find_tree(id)
            .map_err(|e| Error::git("checkpoint tree", e))
    };
    let from = from.map(tree).transpose()?;
    let to = tree(to)?;
    let diff = mem
        .diff_tree_to_tree(from.as_ref(), Some(&to), None)
        .map_err(|e| Error::git("the work tree's changes", e))?;
    let writer = WorktreeWriter::open(clone)?;
    let (mut written, mut removed) = (0, 0);
    let gitlink = |mode: git2::FileMode| mode == git2::FileMode::Commit;
    for delta in diff.deltas() {
        if delta.status() == Delta::Deleted && !gitlink(delta.old_file().mode()) {
            let path = delta.old_file().path_bytes().unwrap_or_default();
            removed += usize::from(writer.remove(path)?);
        }
    }
    for delta in diff.deltas() {
        let new = delta.new_file();
        if delta.status() == Delta::Deleted || gitlink(new.mode()) {
            continue;
        }
        let blob = mem
            .find_object(new.id(), Some(ObjectType::Blob))
            .and_then(|o| o.peel_to_blob())
            .map_err(|e| Error::git("a checkpoint file", e))?;
        let entry = match new.mode() {
            git2::FileMode::Link => NewEntry::Symlink {
                target: blob.content(),
            },
            mode => NewEntry::File {
                data: blob.content(),
                executable: mode == git2::FileMode::BlobExecutable,
            },
        };
        writer.write(new.path_bytes().unwrap_or_default(), entry)?;
        written += 1;
    }
    Ok((written, removed))
}

fn restore_now(request: &RestoreRequest, deadline: Deadline) -> Result<Restored> {
    let limits = &request.limits;
    let store = CheckpointStore::open(&request.base_dir, &request.session)?;
    let record = store.get(&request.checkpoint)?;
    let commits = store.commits(&record.id)?;
    let clone = &request.clone;
    let checkpoint = Checkpoint {
        store: &store,
        record: &record,
        commits: store.commits(&record.id)?,
    };
    rebuild_git_dir(clone, checkpoint, limits, deadline)?;
    let clone_repo = open_clone(clone, limits)?;
    import_into(&store, &clone_repo, commits, limits, deadline)?;
    let mem = memory_repo(&clone_repo)?;
    let head = record.head_id()?;
    let before = current_tree(&clone_repo, clone, &mem, head, limits, deadline)?;
    set_head(&clone_repo, clone, &record, record.branch.as_deref())?;
    let (files_written, files_removed) =
        apply_tree_diff(clone, &mem, Some(before), record.worktree_tree_id()?)?;
    write_index(&clone_repo, record.index_tree_id()?)?;
    Ok(Restored {
        checkpoint: record,
        files_written,
        files_removed,
    })
}

/// Which checkpoint goes back into which clone.
#[derive(Debug, Clone)]
pub struct RestoreRequest {
    pub base_dir: PathBuf,
    pub session: String,
    pub clone: PathBuf,
    pub checkpoint: String,
    pub limits: Limits,
}

/// `request.clone` put back to the checkpoint, on a thread of its own within
/// `limits.timeout`.
pub fn restore_checkpoint(request: RestoreRequest) -> Result<Restored> {
    let timeout = request.limits.timeout;
    run_bounded("restore", timeout, move |commitment| {
        let deadline = Deadline::after(request.limits.timeout);
        commitment.write(&deadline, "restore", || restore_now(&request, deadline))
    })
}
