//! The project side of a session clone: opening the project as a repository, or making it
//! one (a default `.gitignore` if it has none, and one commit of everything).

use std::path::Path;

use git2::{IndexAddOption, Repository, RepositoryOpenFlags, Signature};

use super::ignore_rules::DEFAULT_GITIGNORE;
use crate::error::{Error, ErrorCode, Result};
use crate::project_dir::project_dir;

/// The user git is configured with (repository, global or system config), else the
/// library's own identity.
pub fn signature(repo: &Repository) -> Result<Signature<'static>> {
    match repo.signature() {
        Ok(sig) => Ok(sig.to_owned()),
        Err(_) => Signature::now("container-isolation", "container-isolation@localhost")
            .map_err(|e| Error::git("signature", e)),
    }
}

/// Whether `dir` itself is the root of a repository (a parent repository does not count).
pub fn is_repo_root(dir: &Path) -> bool {
    open_root(dir).is_ok()
}

fn open_root(dir: &Path) -> std::result::Result<Repository, git2::Error> {
    Repository::open_ext(
        dir,
        RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&str>(),
    )
}

fn lock_directory(dir: &Path) -> std::io::Result<std::fs::File> {
    let handle = std::fs::File::open(dir)?;
    handle.lock()?;
    Ok(handle)
}

fn has_commit(repo: &Repository) -> bool {
    repo.head().ok().and_then(|h| h.target()).is_some()
}

/// Whether `dir` is the root of a repository whose HEAD is a commit: one a session can be
/// cloned from as it is (anything else is initialised, or snapshotted).
pub fn has_own_commit(dir: &Path) -> bool {
    open_root(dir).is_ok_and(|repo| has_commit(&repo))
}

/// Opens the project's repository, initialising it when needed, and makes sure HEAD points
/// at a commit. A directory inside another repository (but not its root) gets a repository
/// of its own, as `git init` would.
pub fn open_or_init(project: &Path) -> Result<Repository> {
    project_dir(project)?;
    let what = format!("project {}", project.display());
    if let Ok(repo) = open_root(project) {
        if has_commit(&repo) {
            return Ok(repo);
        }
    }
    // An advisory lock on the project directory itself (released when dropped, also by a
    // crash), so that concurrent first clones, in this process or another, make exactly one
    // initial commit.
    let _held = lock_directory(project).map_err(|e| {
        Error::new(
            ErrorCode::Git,
            format!("{what}: cannot lock the directory: {e}"),
        )
    })?;
    let repo = match open_root(project) {
        Ok(repo) => repo,
        Err(_) => {
            let gitignore = project.join(".gitignore");
            if !gitignore.exists() {
                std::fs::write(&gitignore, DEFAULT_GITIGNORE).map_err(|e| {
                    Error::new(ErrorCode::Eacces, format!("{}: {e}", gitignore.display()))
                })?;
            }
            // Another process may initialise it at the same moment: its repository will do.
            Repository::init(project)
                .or_else(|e| open_root(project).map_err(|_| e))
                .map_err(|e| Error::git(&what, e))?
        }
    };
    if !has_commit(&repo) {
        if let Err(err) = commit_everything(&repo, &what) {
            // Another process committed first; its commit is the project's HEAD now.
            let reopened = open_root(project).map_err(|e| Error::git(&what, e))?;
            if !has_commit(&reopened) {
                return Err(err);
            }
            return Ok(reopened);
        }
    }
    Ok(repo)
}

/// Commits the whole work tree (minus what `.gitignore` excludes) as the first commit. The
/// branch is created only if it does not exist yet, so a racing process cannot be overwritten.
fn commit_everything(repo: &Repository, what: &str) -> Result<()> {
    let fail = |e| Error::git(what, e);
    let mut index = repo.index().map_err(fail)?;
    let workdir = repo.workdir().unwrap_or(Path::new("."));
    let mut embedded = Vec::new();
    let mut skip_embedded = |path: &Path, _: &[u8]| -> i32 {
        if workdir.join(path).join(".git").exists() {
            embedded.push(path.to_path_buf());
            1
        } else {
            0
        }
    };
    index
        .add_all(["*"], IndexAddOption::DEFAULT, Some(&mut skip_embedded))
        .map_err(fail)?;
    for path in embedded {
        add_gitlink(&mut index, workdir, &path).map_err(fail)?;
    }
    let tree_id = index.write_tree().map_err(fail)?;
    let tree = repo.find_tree(tree_id).map_err(fail)?;
    let sig = signature(repo)?;
    let message = "Initial commit (container-isolation)";
    let commit = repo
        .commit(None, &sig, &sig, message, &tree, &[])
        .map_err(fail)?;
    let head = repo.find_reference("HEAD").map_err(fail)?;
    let branch = head
        .symbolic_target()
        .ok()
        .flatten()
        .unwrap_or("refs/heads/main")
        .to_string();
    repo.reference(
        &branch,
        commit,
        false,
        &format!("commit (initial): {message}"),
    )
    .map_err(fail)?;
    index.write().map_err(fail)?;
    Ok(())
}

/// An embedded repository is recorded as `git add` does: a gitlink to its checked-out commit
/// (its files are not part of the commit, so a clone has an empty directory there). One
/// without a commit is left out.
fn add_gitlink(
    index: &mut git2::Index,
    workdir: &Path,
    path: &Path,
) -> std::result::Result<(), git2::Error> {
    let Ok(commit) = Repository::open(workdir.join(path)).and_then(|r| r.refname_to_id("HEAD"))
    else {
        return Ok(());
    };
    let name = path.to_string_lossy();
    let name = name.trim_end_matches('/').as_bytes().to_vec();
    index.add(&git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: 0o160000,
        uid: 0,
        gid: 0,
        file_size: 0,
        id: commit,
        flags: name.len().min(0xfff) as u16,
        flags_extended: 0,
        path: name,
    })
}
