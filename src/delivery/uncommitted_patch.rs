//! The unified diff of a session's uncommitted work: from HEAD's tree to the tree export's
//! snapshot would record (`worktree_tree`: the same paths, reads, bounds and deadline, and
//! the same checks of what it adds), made in a repository in memory (`memory_repo`), never
//! in the clone. A file over the blob bound is hashed as it is read, never held, and known
//! by id and size only (`unloaded_blobs`): it is printed as git prints a binary file, as
//! are files read once the blobs kept in memory reach four times the blob bound.

use std::path::Path;

use git2::{Commit, ObjectType, Odb, Oid, Repository};

use super::file_changes::changed_files;
use super::limits::{Deadline, Limits};
use super::memory_repo::memory_repo;
use super::new_tree_check::check_new_trees;
use super::patch_text::PatchText;
use super::unloaded_blobs::{add_unloaded_blobs, Unloaded};
use super::worktree_tree::{worktree_tree, BlobSink};
use crate::error::{Error, ErrorCode, Result};

/// Asked last: the blobs it knows are in no other backend.
const UNLOADED_PRIORITY: i32 = 0;

/// Blobs kept in memory: those the clone lacks, within the blob bound, while they fit.
struct KeepInMemory<'r> {
    odb: Odb<'r>,
    max_blob: u64,
    /// Bytes kept; past `keep_max` the rest are hashed only.
    kept: u64,
    keep_max: u64,
    /// Blobs not kept, each said to be over the blob bound (so never loaded).
    unloaded: Unloaded,
}

impl KeepInMemory<'_> {
    fn not_kept(&mut self, id: Oid, size: u64) -> Result<Oid> {
        let mut unloaded = self
            .unloaded
            .lock()
            .map_err(|_| Error::new(ErrorCode::Git, "blobs not kept: a lock was poisoned"))?;
        unloaded.insert(id, size.max(self.max_blob + 1));
        Ok(id)
    }
}

impl BlobSink for KeepInMemory<'_> {
    fn put(&mut self, data: Vec<u8>) -> Result<Oid> {
        let id = Oid::hash_object(ObjectType::Blob, &data)
            .map_err(|e| Error::git("hashing a blob", e))?;
        let size = data.len() as u64;
        if self.odb.exists(id) {
            return Ok(id);
        }
        if size > self.max_blob || self.kept + size > self.keep_max {
            return self.not_kept(id, size);
        }
        self.odb
            .write(ObjectType::Blob, &data)
            .map_err(|e| Error::git("a blob in memory", e))?;
        self.kept += size;
        Ok(id)
    }

    fn load_bound(&self) -> u64 {
        self.max_blob
    }

    fn put_hashed(&mut self, id: Oid, size: u64) -> Result<Oid> {
        match self.odb.exists(id) {
            true => Ok(id),
            false => self.not_kept(id, size),
        }
    }
}

/// Appends to `text` the diff from `head`'s tree to the work tree of the clone at `clone`.
pub fn uncommitted_patch(
    clone_repo: &Repository,
    clone: &Path,
    head: &Commit,
    text: &mut PatchText,
    limits: &Limits,
    deadline: Deadline,
) -> Result<()> {
    let memory = memory_repo(clone_repo)?;
    let odb = memory
        .odb()
        .map_err(|e| Error::git("objects in memory", e))?;
    let unloaded = add_unloaded_blobs(&odb, UNLOADED_PRIORITY)?;
    let mut sink = KeepInMemory {
        odb,
        max_blob: limits.max_blob_bytes,
        kept: 0,
        keep_max: limits.max_blob_bytes.saturating_mul(4),
        unloaded,
    };
    let tree = worktree_tree(
        clone_repo, clone, head, &memory, &mut sink, limits, deadline,
    )?;
    if tree == head.tree_id() {
        return Ok(());
    }
    let clone_odb = clone_repo
        .odb()
        .map_err(|e| Error::git("the clone's objects", e))?;
    check_new_trees(&sink.odb, &clone_odb, tree, limits, deadline)?;
    let find = |id| {
        memory
            .find_tree(id)
            .map_err(|e| Error::git("the work tree's tree", e))
    };
    let (old, new) = (find(head.tree_id())?, find(tree)?);
    changed_files(&memory, Some(&old), &new, limits, deadline, Some(text))?;
    Ok(())
}
