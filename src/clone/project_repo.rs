//! The project side of a session clone: opening the project as a repository, or making it
//! one (a default `.gitignore` if it has none, and one commit of everything).

use std::path::Path;

use git2::{IndexAddOption, Repository, RepositoryOpenFlags, Signature};

use crate::error::{Error, ErrorCode, Result};

const DEFAULT_GITIGNORE: &str =
    "node_modules/\n.DS_Store\n*.log\n.env\n.env.*\ntarget/\ndist/\n__pycache__/\n";

pub fn git_error(what: &str, err: git2::Error) -> Error {
    Error::new(ErrorCode::Git, format!("{what}: {}", err.message()))
}

/// The user git is configured with, else the library's own identity.
pub fn signature(repo: &Repository) -> Result<Signature<'static>> {
    match repo.signature() {
        Ok(sig) => Ok(sig.to_owned()),
        Err(_) => Signature::now("container-isolation", "container-isolation@localhost")
            .map_err(|e| git_error("signature", e)),
    }
}

/// Whether `dir` itself is the root of a repository (a parent repository does not count).
pub fn is_repo_root(dir: &Path) -> bool {
    Repository::open_ext(
        dir,
        RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&str>(),
    )
    .is_ok()
}

/// Opens the project's repository, initialising it when needed, and makes sure HEAD points
/// at a commit.
pub fn open_or_init(project: &Path) -> Result<Repository> {
    let what = format!("project {}", project.display());
    if !project.is_dir() {
        return Err(Error::new(
            ErrorCode::Enoent,
            format!("{what}: no such directory"),
        ));
    }
    let repo = if is_repo_root(project) {
        Repository::open_ext(
            project,
            RepositoryOpenFlags::NO_SEARCH,
            std::iter::empty::<&str>(),
        )
        .map_err(|e| git_error(&what, e))?
    } else {
        let gitignore = project.join(".gitignore");
        if !gitignore.exists() {
            std::fs::write(&gitignore, DEFAULT_GITIGNORE).map_err(|e| {
                Error::new(ErrorCode::Eacces, format!("{}: {e}", gitignore.display()))
            })?;
        }
        Repository::init(project).map_err(|e| git_error(&what, e))?
    };
    if repo.head().ok().and_then(|h| h.target()).is_none() {
        commit_everything(&repo, &what)?;
    }
    Ok(repo)
}

fn commit_everything(repo: &Repository, what: &str) -> Result<()> {
    let mut index = repo.index().map_err(|e| git_error(what, e))?;
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .map_err(|e| git_error(what, e))?;
    index.write().map_err(|e| git_error(what, e))?;
    let tree_id = index.write_tree().map_err(|e| git_error(what, e))?;
    let tree = repo.find_tree(tree_id).map_err(|e| git_error(what, e))?;
    let sig = signature(repo)?;
    repo.commit(
        Some("HEAD"),
        &sig,
        &sig,
        "Initial commit (container-isolation)",
        &tree,
        &[],
    )
    .map_err(|e| git_error(what, e))?;
    Ok(())
}
