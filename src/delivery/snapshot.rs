//! The session's uncommitted work as one commit on top of its HEAD, made in a repository
//! the host owns (never in the clone): the work tree as `git add -A` would record it
//! (`worktree_tree`), its blobs and trees written there. The clone's HEAD, index and files
//! are left as they are.

use std::path::Path;

use git2::{Commit, Oid, Repository, Signature};

use super::limits::{Deadline, Limits};
use super::worktree_tree::{worktree_tree, BlobSink};
use crate::error::{Error, Result};

/// Blobs written into the repository the snapshot is made in.
struct WriteInto<'r>(&'r Repository);

impl BlobSink for WriteInto<'_> {
    fn put(&mut self, data: Vec<u8>) -> Result<Oid> {
        self.0
            .blob(&data)
            .map_err(|e| Error::git("writing a blob", e))
    }
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
    let mut sink = WriteInto(target);
    let tree = worktree_tree(clone_repo, clone, head, target, &mut sink, limits, deadline)?;
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
