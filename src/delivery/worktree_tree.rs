//! The tree `git add -A` would write for a clone's work tree, built without touching the
//! clone: every path that `git status` would show (staged, unstaged, untracked and not
//! ignored, renames' old paths) is read from the work tree as it is, without filters and
//! without following a symlink (`worktree_entry`), within the bounds and the deadline, and
//! HEAD's tree is updated with it. Export's snapshot and the uncommitted patch of `changes`
//! both build it; where the blobs go is the caller's (`BlobSink`), the trees go to the
//! repository given.

use std::collections::BTreeSet;
use std::path::Path;

use git2::build::TreeUpdateBuilder;
use git2::{Commit, DiffOptions, FileMode, Oid, Repository};

use super::bounded_diff::{diff, Sides};
use super::file_changes::lossy;
use super::limits::{exceeded, Deadline, Limits};
use super::worktree_entry::{open_root, read_entry, ReadBounds, WorktreeEntry};
use crate::error::{Error, ErrorCode, Result};

/// Where the work tree's files go as blobs.
pub trait BlobSink {
    /// The blob id of `data`, kept wherever the tree's readers will look for it.
    fn put(&mut self, data: Vec<u8>) -> Result<Oid>;

    /// Files over this many bytes are hashed as they are read and given to `put_hashed`.
    fn load_bound(&self) -> u64 {
        u64::MAX
    }

    /// A blob known by its id and size only.
    fn put_hashed(&mut self, id: Oid, size: u64) -> Result<Oid> {
        let _ = size;
        Err(Error::new(
            ErrorCode::Git,
            format!("blob {id}: its content was not read"),
        ))
    }
}

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

fn file_mode(executable: bool) -> FileMode {
    match executable {
        true => FileMode::BlobExecutable,
        false => FileMode::Blob,
    }
}

/// Counts `size` more bytes read from the work tree, within the import bound.
fn count(bytes: &mut u64, size: u64, limits: &Limits) -> Result<()> {
    *bytes += size;
    if *bytes > limits.max_import_bytes {
        return Err(exceeded(
            "bytes of uncommitted files",
            limits.max_import_bytes,
        ));
    }
    Ok(())
}

/// The blob (and its mode) for what the work tree holds at `path`; `None` for no file.
fn stored_entry(
    sink: &mut dyn BlobSink,
    entry: WorktreeEntry,
    bytes: &mut u64,
    limits: &Limits,
) -> Result<Option<(Oid, FileMode)>> {
    let (data, mode) = match entry {
        WorktreeEntry::File { data, executable } => (data, file_mode(executable)),
        WorktreeEntry::Symlink(target) => (target, FileMode::Link),
        WorktreeEntry::Hashed {
            id,
            size,
            executable,
        } => {
            count(bytes, size, limits)?;
            return Ok(Some((sink.put_hashed(id, size)?, file_mode(executable))));
        }
        WorktreeEntry::Other => return Ok(None),
    };
    count(bytes, data.len() as u64, limits)?;
    Ok(Some((sink.put(data)?, mode)))
}

/// The tree of HEAD (which `target` must be able to read) with the work tree's changes,
/// its trees written in `target`, its blobs given to `sink`.
pub fn worktree_tree(
    clone_repo: &Repository,
    clone: &Path,
    head: &Commit,
    target: &Repository,
    sink: &mut dyn BlobSink,
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
        let bounds = ReadBounds {
            max: limits.max_object_bytes,
            load: sink.load_bound(),
        };
        let entry = read_entry(&root, path, bounds)?;
        match stored_entry(sink, entry, &mut bytes, limits)? {
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
