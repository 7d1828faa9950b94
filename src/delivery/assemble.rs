//! A session's work assembled in a staging repository: the clone (opened as hostile
//! input) gives its HEAD commit, whose objects the project lacks are copied and checked,
//! and, when asked, the work tree's uncommitted changes become one more commit on top.

use std::path::Path;

use git2::{Oid, Repository, Signature};

use super::hostile_repo::open_clone;
use super::limits::{Deadline, Limits};
use super::object_import::import_objects;
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
    let head = clone_repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| Error::git("the clone's HEAD", e))?;
    let source = clone_repo
        .odb()
        .map_err(|e| Error::git("the clone's objects", e))?;
    let target = staging
        .repo()
        .odb()
        .map_err(|e| Error::git("the staging objects", e))?;
    let imported = import_objects(&source, &target, head.id(), limits, deadline)?;
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
    let assembled = Assembled {
        head: head.id(),
        snapshot,
        objects: imported.objects,
    };
    drop(target);
    Ok((staging, assembled))
}
