//! The project of a session made from a remote repository rather than a local checkout
//! (a daemon's job): cloned on the host with libgit2, through `git_transport`, with the
//! caller's credentials for this clone only (they reach no config, URL or log), into
//! `${baseDir}/repositories/session-<id>`, which the library owns and never mounts. Its
//! work tree is checked out at the session's start (`ref`: a branch or tag of the remote,
//! or a commit id; default the remote's HEAD), so that its devcontainer.json is the one
//! the session starts with. Built aside and renamed into place. The same place holds a
//! plain folder's snapshot (`folder_snapshot`); either goes to the trash with the clone.

use std::path::{Path, PathBuf};

use git2::build::{CheckoutBuilder, RepoBuilder};
use git2::{FetchOptions, Oid, Repository};

use super::clone_manager::{branch_name, CloneManager};
use super::project_repo::is_repo_root;
use super::session_id::validate_session_id;
use crate::error::{Error, ErrorCode, Result};
use crate::git_transport::{plain_remote, with_transfer, Transfer};

/// Where a session's own project lives: a remote's clone, or a plain folder's snapshot.
pub fn remote_project_path(base_dir: &Path, session_id: &str) -> Result<PathBuf> {
    validate_session_id(session_id)?;
    Ok(base_dir.join("repositories").join(branch_name(session_id)))
}

fn not_found(text: &str, url: &str) -> Error {
    Error::new(
        ErrorCode::GitRefNotFound,
        format!("ref {text:?} names no branch, tag or commit of {url}"),
    )
}

/// The commit `start` names in a fresh clone: a branch of the remote, a tag, or a commit
/// id; the remote's HEAD when absent.
fn resolve(repo: &Repository, start: Option<&str>, url: &str) -> Result<Oid> {
    let Some(text) = start else {
        return repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .map(|c| c.id())
            .map_err(|_| not_found("HEAD", url));
    };
    crate::delivery::validate_ref(text)?;
    for name in [
        format!("refs/remotes/origin/{text}"),
        format!("refs/tags/{text}"),
    ] {
        if let Ok(commit) = repo.find_reference(&name).and_then(|r| r.peel_to_commit()) {
            return Ok(commit.id());
        }
    }
    let is_id = text.len() >= 7 && text.bytes().all(|b| b.is_ascii_hexdigit());
    match is_id {
        true => repo
            .revparse_single(text)
            .and_then(|o| o.peel_to_commit())
            .map(|c| c.id())
            .map_err(|_| not_found(text, url)),
        false => Err(not_found(text, url)),
    }
}

fn build(transfer: &Transfer, dir: &Path, start: Option<&str>) -> Result<Oid> {
    let mut no_checkout = CheckoutBuilder::new();
    no_checkout.dry_run();
    let repo = with_transfer(transfer, |url| {
        let mut fetch = FetchOptions::new();
        fetch.download_tags(git2::AutotagOption::All);
        RepoBuilder::new()
            .fetch_options(fetch)
            .with_checkout(no_checkout)
            .remote_create(|repo, name, url| plain_remote(repo, Some(name), url))
            .clone(url, dir)
    })?;
    let start = resolve(&repo, start, transfer.url.as_str())?;
    repo.set_head_detached(start)
        .map_err(|e| Error::git("the remote project's HEAD", e))?;
    let mut checkout = CheckoutBuilder::new();
    checkout.force();
    repo.checkout_head(Some(&mut checkout))
        .map_err(|e| Error::git("checking out the remote project", e))?;
    Ok(start)
}

/// Clones the remote for `session_id`, or returns the one already there (resolving
/// `start` in it again); returns the project's path and the session's starting commit.
pub fn clone_remote_project(
    base_dir: &Path,
    session_id: &str,
    transfer: &Transfer,
    start: Option<&str>,
) -> Result<(PathBuf, Oid)> {
    let target = remote_project_path(base_dir, session_id)?;
    if let Some(text) = start {
        crate::delivery::validate_ref(text)?;
    }
    if is_repo_root(&target) {
        let repo = Repository::open(&target).map_err(|e| Error::git("remote project", e))?;
        let at = match start {
            None => repo.head().and_then(|h| h.peel_to_commit()).map(|c| c.id()),
            Some(_) => Ok(resolve(&repo, start, transfer.url.as_str())?),
        };
        return Ok((target, at.map_err(|e| Error::git("remote project", e))?));
    }
    let parent = target.parent().unwrap_or(base_dir);
    std::fs::create_dir_all(parent)
        .map_err(|e| Error::new(ErrorCode::Eacces, format!("{}: {e}", parent.display())))?;
    let temp = parent.join(format!(
        ".tmp-{}-{}",
        branch_name(session_id),
        uuid::Uuid::new_v4().simple()
    ));
    let built = build(transfer, &temp, start);
    let start = match built {
        Ok(start) => start,
        Err(err) => {
            let _ = std::fs::remove_dir_all(&temp);
            return Err(err);
        }
    };
    if let Err(e) = std::fs::rename(&temp, &target) {
        let _ = std::fs::remove_dir_all(&temp);
        if !is_repo_root(&target) {
            return Err(Error::new(
                ErrorCode::Eexist,
                format!("{}: {e}", target.display()),
            ));
        }
    }
    Ok((target, start))
}

/// Moves the session's own project (a remote's clone or a folder's snapshot) to the
/// trash, beside its clone; `None` when there is none.
pub fn trash_remote_project(clones: &CloneManager, session_id: &str) -> Result<Option<PathBuf>> {
    let source = remote_project_path(clones.base_dir(), session_id)?;
    if !source.exists() {
        return Ok(None);
    }
    let name = format!("repository-{session_id}");
    let bin = clones.new_trash_bin(&name)?;
    let destination = bin.join(&name);
    std::fs::rename(&source, &destination)
        .map(|_| Some(destination))
        .map_err(|e| Error::new(ErrorCode::Eacces, format!("{}: {e}", source.display())))
}

/// Moves the session's clone to the trash, and its own project with it (as `destroy` and
/// the reaper do); the clone's trash path, `None` when it had none.
pub fn remove_session_clone_and_project(
    clones: &CloneManager,
    session_id: &str,
) -> Result<Option<PathBuf>> {
    let moved = clones.remove_session_clone(session_id)?;
    trash_remote_project(clones, session_id)?;
    Ok(moved)
}
