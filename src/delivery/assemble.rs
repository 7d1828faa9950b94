//! A session's work assembled in a staging repository: the clone (opened as hostile
//! input) gives its HEAD commit, whose objects the project lacks are copied and checked,
//! and, when asked, the work tree's uncommitted changes become one more commit on top,
//! checked the same way before anything leaves the staging repository.

use std::path::Path;

use git2::{Odb, Oid, Repository, Signature};

use super::hostile_repo::open_clone;
use super::limits::{Deadline, Limits};
use super::object_import::import_objects;
use super::object_walk::{Checked, ObjectWalk};
use super::snapshot::{snapshot, CommitAs};
use super::staging::Staging;
use crate::error::{Error, Result};

/// Who a snapshot commit is by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    pub name: String,
    pub email: String,
}

impl Author {
    pub fn signature(&self) -> Result<Signature<'static>> {
        Signature::now(&self.name, &self.email).map_err(|e| Error::git("the snapshot's author", e))
    }
}

/// What to take from the clone.
pub struct AssembleOptions<'a> {
    /// Snapshot the work tree's uncommitted and untracked (not ignored) files too.
    pub uncommitted: bool,
    /// The snapshot commit's message.
    pub message: &'a str,
    /// The snapshot commit's author and committer.
    pub author: &'a Author,
}

/// The session's work, in the staging repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Assembled {
    /// The clone's HEAD commit.
    pub head: Oid,
    /// The snapshot commit on top of it, when there was uncommitted work to take.
    pub snapshot: Option<Oid>,
    /// Objects the project lacked, copied from the clone.
    pub objects: usize,
}

impl Assembled {
    /// The commit that leaves: the snapshot, else HEAD.
    pub fn tip(&self) -> Oid {
        self.snapshot.unwrap_or(self.head)
    }
}

/// The snapshot's new trees and blobs (made from the work tree's names and bytes, which the
/// session controls as much as its objects) checked as the imported objects were.
fn check_snapshot(
    project: &Repository,
    staging: &Odb,
    tip: Oid,
    checked: Checked,
    limits: &Limits,
    deadline: Deadline,
) -> Result<()> {
    let project_objects = project
        .odb()
        .map_err(|e| Error::git("the project's objects", e))?;
    ObjectWalk::new(staging, &project_objects, limits, deadline, checked).run(tip)
}

/// The session's work in a new staging repository that sees `project`'s objects.
pub fn assemble(
    clone: &Path,
    project: &Repository,
    staging_root: &Path,
    opts: &AssembleOptions,
    limits: &Limits,
    deadline: Deadline,
) -> Result<(Staging, Assembled)> {
    let author = opts.author.signature()?;
    let staging = Staging::new(staging_root, project)?;
    let clone_repo = open_clone(clone, limits)?;
    // The id only: the walk checks the commit before libgit2 parses it.
    let head_id = clone_repo
        .refname_to_id("HEAD")
        .map_err(|e| Error::git("the clone's HEAD", e))?;
    let source = clone_repo
        .odb()
        .map_err(|e| Error::git("the clone's objects", e))?;
    let target = staging
        .repo()
        .odb()
        .map_err(|e| Error::git("the staging objects", e))?;
    let imported = import_objects(&source, &target, head_id, limits, deadline)?;
    let head = clone_repo
        .find_commit(head_id)
        .map_err(|e| Error::git("the clone's HEAD", e))?;
    let snapshot = match opts.uncommitted {
        true => snapshot(
            &clone_repo,
            clone,
            &head,
            staging.repo(),
            CommitAs {
                author: &author,
                message: opts.message,
            },
            limits,
            deadline,
        )?,
        false => None,
    };
    if let Some(tip) = snapshot {
        check_snapshot(project, &target, tip, imported.checked, limits, deadline)?;
    }
    let assembled = Assembled {
        head: head.id(),
        snapshot,
        objects: imported.objects,
    };
    drop(target);
    Ok((staging, assembled))
}
