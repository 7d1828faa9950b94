//! A plain folder (not a git repository, or one without a commit yet) made a session's
//! project without writing anything under it: its files are snapshotted (`folder_tree`)
//! as one commit of a repository the library owns, `${baseDir}/repositories/session-<id>`
//! (never mounted), whose work tree is checked out there so that its devcontainer.json is
//! read from it, as a remote project's is. The session is cloned from that. Built aside on
//! a thread of its own within the time bound and renamed into place; a build that fails,
//! is cut short or outlives its caller removes itself.

use std::path::{Path, PathBuf};

use git2::build::CheckoutBuilder;
use git2::{Oid, Repository};

use super::clone_manager::{branch_name, remove_abandoned_builds};
use super::folder_tree::{FolderTree, SnapshotLimits};
use super::project_repo::{is_repo_root, signature};
use super::remote_project::remote_project_path;
use crate::delivery::{run_bounded, Deadline};
use crate::error::{Error, ErrorCode, Result};

/// A repository being built; removed when dropped unless it was put in place.
struct Build {
    dir: PathBuf,
    placed: bool,
}

impl Drop for Build {
    fn drop(&mut self) {
        if !self.placed {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

const EXCLUDES: &str = "core.excludesFile";

/// The snapshot commit of `folder` in a new repository at `dir`, checked out there.
fn build(dir: &Path, folder: &Path, limits: SnapshotLimits, deadline: Deadline) -> Result<Oid> {
    let what = format!("snapshot of {}", folder.display());
    let fail = |e| Error::git(&what, e);
    let repo = Repository::init(dir).map_err(fail)?;
    // Only the folder's own ignore rules and the library's count, not those of the host
    // user's global excludes file: its own (empty) exclude file stands in while it is read.
    let mut config = repo.config().map_err(fail)?;
    let own = dir.join(".git").join("info").join("exclude");
    config
        .set_str(EXCLUDES, &own.to_string_lossy())
        .map_err(fail)?;
    // Opened bare, the repository has no work tree whose files could add rules.
    let bare = Repository::open_bare(dir.join(".git")).map_err(fail)?;
    let tree = FolderTree::new(&bare, limits, deadline)?.write(folder)?;
    config.remove(EXCLUDES).map_err(fail)?;
    deadline.check(&what)?;
    let tree = bare.find_tree(tree).map_err(fail)?;
    let author = signature(&bare)?;
    let message = format!("Snapshot of {} (container-isolation)", folder.display());
    let commit = bare
        .commit(None, &author, &author, &message, &tree, &[])
        .map_err(fail)?;
    bare.set_head_detached(commit).map_err(fail)?;
    let mut checkout = CheckoutBuilder::new();
    checkout.force().target_dir(dir);
    bare.checkout_head(Some(&mut checkout)).map_err(fail)?;
    Ok(commit)
}

fn head_commit(repo: &Path) -> Result<Oid> {
    Repository::open(repo)
        .and_then(|r| r.head()?.peel_to_commit().map(|c| c.id()))
        .map_err(|e| Error::git(&format!("snapshot {}", repo.display()), e))
}

/// Snapshots `folder` for `session_id`, or returns the snapshot already there; returns
/// the library's repository and the snapshot commit (the session's start).
pub fn snapshot_folder(
    base_dir: &Path,
    session_id: &str,
    folder: &Path,
    limits: SnapshotLimits,
) -> Result<(PathBuf, Oid)> {
    let target = remote_project_path(base_dir, session_id)?;
    if is_repo_root(&target) {
        return Ok((target.clone(), head_commit(&target)?));
    }
    let parent = target.parent().unwrap_or(base_dir).to_path_buf();
    std::fs::create_dir_all(&parent)
        .map_err(|e| Error::new(ErrorCode::Eacces, format!("{}: {e}", parent.display())))?;
    remove_abandoned_builds(&parent);
    let temp = parent.join(format!(
        ".tmp-{}-{}",
        branch_name(session_id),
        uuid::Uuid::new_v4().simple()
    ));
    let folder = folder.to_path_buf();
    let (mut built, commit) = run_bounded("snapshot", limits.timeout, move |_| {
        let deadline = Deadline::after(limits.timeout);
        let built = Build {
            dir: temp,
            placed: false,
        };
        let commit = build(&built.dir, &folder, limits, deadline)?;
        Ok((built, commit))
    })?;
    match std::fs::rename(&built.dir, &target) {
        Ok(()) => {
            built.placed = true;
            Ok((target, commit))
        }
        // Another call for the session put its snapshot there first.
        Err(_) if is_repo_root(&target) => Ok((target.clone(), head_commit(&target)?)),
        Err(e) => Err(Error::new(
            ErrorCode::Eexist,
            format!("{}: {e}", target.display()),
        )),
    }
}

#[cfg(test)]
#[path = "folder_snapshot_tests.rs"]
mod tests;
