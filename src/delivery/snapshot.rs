//! The session's uncommitted work as one commit on top of its HEAD, made in a repository
//! the host owns (never in the clone): every path that `git status` would show (staged,
//! unstaged, untracked and not ignored, renames' old paths) is read from the work tree as
//! it is, without filters and without following a symlink, and the HEAD tree is updated
//! with it. The clone's HEAD, index and files are left as they are.

use std::collections::BTreeSet;
use std::path::Path;

use git2::build::TreeUpdateBuilder;
use git2::{Commit, DiffOptions, FileMode, Oid, Repository, Signature};

use super::bounded_diff::{diff, Sides};
use super::file_changes::lossy;
use super::limits::{exceeded, Deadline, Limits};
use super::worktree_entry::{open_root, read_entry, WorktreeEntry};
use crate::error::{Error, Result};

/// Every path of the clone that differs from HEAD in its index or work tree.
fn changed_paths(
    clone_repo: &Repository,
    head: &Commit,
    limits: &Limits,
    deadline: Deadline,
) -> Result<BTreeSet<String>> {
    let index = clone_repo.index().map_err(|e| Error::git("index", e))?;
    let tree = head.tree().map_err(|e| Error::git("HEAD's tree", e))?;
    let mut opts = DiffOptions::new();
    opts.include_typechange(true);
    let staged = diff(
        clone_repo,
        Sides::TreeToIndex(Some(&tree), &index),
        &mut opts,
        limits.max_files,
        deadline,
    )?;
    let mut opts = DiffOptions::new();
    opts.include_typechange(true)
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false);
    let unstaged = diff(
        clone_repo,
        Sides::IndexToWorkdir(&index),
        &mut opts,
        limits.max_files,
        deadline,
    )?;
    let mut paths = BTreeSet::new();
    for delta in staged.deltas().chain(unstaged.deltas()) {
        for side in [delta.old_file(), delta.new_file()] {
            if side.path_bytes().is_some() {
                paths.insert(lossy(side.path_bytes()));
            }
        }
    }
    if paths.len() > limits.max_files {
        return Err(exceeded("uncommitted files", limits.max_files));
    }
    Ok(paths)
}

/// The blob (and its mode) for what the work tree holds at `path`; `None` for no file.
fn stored_entry(
    target: &Repository,
    entry: WorktreeEntry,
    bytes: &mut u64,
    limits: &Limits,
) -> Result<Option<(Oid, FileMode)>> {
    let (data, mode) = match entry {
        WorktreeEntry::File { data, executable } => (
            data,
            match executable {
                true => FileMode::BlobExecutable,
                false => FileMode::Blob,
            },
        ),
        WorktreeEntry::Symlink(target) => (target, FileMode::Link),
        WorktreeEntry::Other => return Ok(None),
    };
    *bytes += data.len() as u64;
    if *bytes > limits.max_import_bytes {
        return Err(exceeded(
            "bytes of uncommitted files",
            limits.max_import_bytes,
        ));
    }
    let id = target
        .blob(&data)
        .map_err(|e| Error::git("writing a blob", e))?;
    Ok(Some((id, mode)))
}

/// The tree of HEAD (which `target` must hold already) with the work tree's changes.
fn updated_tree(
    clone_repo: &Repository,
    clone: &Path,
    head: &Commit,
    target: &Repository,
    limits: &Limits,
    deadline: Deadline,
) -> Result<Oid> {
    let paths = changed_paths(clone_repo, head, limits, deadline)?;
    let baseline = target
        .find_tree(head.tree_id())
        .map_err(|e| Error::git("HEAD's tree in the target", e))?;
    let root = open_root(clone)?;
    let mut update = TreeUpdateBuilder::new();
    let mut upserts = Vec::new();
    let mut bytes = 0u64;
    for (n, path) in paths.iter().enumerate() {
        if n % 64 == 0 {
            deadline.check("snapshot of the work tree")?;
        }
        let in_head = baseline.get_path(Path::new(path)).ok();
        if in_head.as_ref().is_some_and(|e| e.filemode() == 0o160000) {
            continue;
        }
        let entry = read_entry(&root, path, limits.max_object_bytes)?;
        match stored_entry(target, entry, &mut bytes, limits)? {
            Some((id, mode)) => upserts.push((path, id, mode)),
            None if in_head.is_some() => {
                update.remove(path);
            }
            None => {}
        }
    }
    for (path, id, mode) in upserts {
        update.upsert(path, id, mode);
    }
    update
        .create_updated(target, &baseline)
        .map_err(|e| Error::git("snapshot tree", e))
}

/// Who the snapshot commit is by, and its message.
pub struct CommitAs<'a> {
    pub author: &'a Signature<'static>,
    pub message: &'a str,
}

/// A commit of the work tree on top of `head`, in `target`; `None` when the work tree
/// holds nothing that HEAD does not.
pub fn snapshot(
    clone_repo: &Repository,
    clone: &Path,
    head: &Commit,
    target: &Repository,
    by: CommitAs,
    limits: &Limits,
    deadline: Deadline,
) -> Result<Option<Oid>> {
    let tree = updated_tree(clone_repo, clone, head, target, limits, deadline)?;
    if tree == head.tree_id() {
        return Ok(None);
    }
    let tree = target
        .find_tree(tree)
        .map_err(|e| Error::git("snapshot tree", e))?;
    let parent = target
        .find_commit(head.id())
        .map_err(|e| Error::git("HEAD in the target", e))?;
    target
        .commit(None, by.author, by.author, by.message, &tree, &[&parent])
        .map(Some)
        .map_err(|e| Error::git("snapshot commit", e))
}
