//! Session clones (docs/contract.md §5): a full repository per session at
//! `${baseDir}/sessions/session-<id>`, sharing no inode with the project (its object files
//! are copies, reflinked where the file system can), on branch `session-<id>` from the
//! project's HEAD. Removal moves a clone to `${baseDir}/.trash/<timestamp>/`; only
//! `empty_trash` deletes.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use git2::build::{CheckoutBuilder, CloneLocal, RepoBuilder};
use git2::Repository;

use super::object_copy::unshare_objects;
use super::project_repo::{is_repo_root, open_or_init};
use super::session_id::validate_session_id;
use crate::error::{Error, ErrorCode, Result};

pub struct CloneManager {
    base_dir: PathBuf,
}

fn io_error(what: &Path, err: std::io::Error) -> Error {
    let code = match err.kind() {
        std::io::ErrorKind::NotFound => ErrorCode::Enoent,
        std::io::ErrorKind::PermissionDenied => ErrorCode::Eacces,
        std::io::ErrorKind::AlreadyExists => ErrorCode::Eexist,
        std::io::ErrorKind::NotADirectory => ErrorCode::Enotdir,
        _ => ErrorCode::Git,
    };
    Error::new(code, format!("{}: {err}", what.display()))
}

/// A clone under construction older than this was left by a crashed process.
const ABANDONED_BUILD_AGE: Duration = Duration::from_secs(3600);

/// Deletes `.tmp-*` directories of clones whose construction was cut short long ago. No
/// session ever used them: a clone becomes a session's only by the final rename.
pub(super) fn remove_abandoned_builds(sessions: &Path) {
    let Ok(entries) = std::fs::read_dir(sessions) else {
        return;
    };
    let builds = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().as_encoded_bytes().starts_with(b".tmp-"));
    for entry in builds {
        let age = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok());
        if age.is_some_and(|age| age > ABANDONED_BUILD_AGE) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn has_gitlinks(commit: &git2::Commit) -> bool {
    let mut found = false;
    if let Ok(tree) = commit.tree() {
        let _ = tree.walk(git2::TreeWalkMode::PreOrder, |_, entry| {
            if entry.filemode() == 0o160000 {
                found = true;
                git2::TreeWalkResult::Abort
            } else {
                git2::TreeWalkResult::Ok
            }
        });
    }
    found
}

pub fn branch_name(session_id: &str) -> String {
    format!("session-{session_id}")
}

impl CloneManager {
    pub fn new(base_dir: PathBuf) -> Self {
        CloneManager { base_dir }
    }

    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    fn sessions_dir(&self) -> PathBuf {
        self.base_dir.join("sessions")
    }

    fn trash_dir(&self) -> PathBuf {
        self.base_dir.join(".trash")
    }

    pub fn clone_path(&self, session_id: &str) -> Result<PathBuf> {
        validate_session_id(session_id)?;
        Ok(self.sessions_dir().join(branch_name(session_id)))
    }

    /// Creates the clone, or returns the existing one unchanged. Uncommitted changes in the
    /// project are not carried over: the clone is of the project's HEAD commit.
    pub fn create_session_clone(&self, project: &Path, session_id: &str) -> Result<PathBuf> {
        let target = self.clone_path(session_id)?;
        if is_repo_root(&target) {
            return Ok(target);
        }
        self.create_session_clone_at(project, session_id, None)
            .map(|(path, _)| path)
    }

    /// As `create_session_clone`, with the session branch at `start` (a branch, tag or
    /// commit of the project, resolved with libgit2, never a shell; default its HEAD).
    /// Returns the clone and the starting commit (the session's base). A `start` that
    /// names no commit rejects `GIT_REF_NOT_FOUND` before anything is made; an existing
    /// clone is returned unchanged.
    pub fn create_session_clone_at(
        &self,
        project: &Path,
        session_id: &str,
        start: Option<&str>,
    ) -> Result<(PathBuf, git2::Oid)> {
        let target = self.clone_path(session_id)?;
        if let Some(text) = start {
            crate::delivery::validate_ref(text)?;
        }
        let project = std::fs::canonicalize(project).map_err(|e| io_error(project, e))?;
        if start.is_some() && !is_repo_root(&project) {
            // Nothing a ref could name; the project is left as it is (not initialised).
            return Err(Error::new(
                ErrorCode::GitRefNotFound,
                format!(
                    "ref {start:?}: {} is not a git repository",
                    project.display()
                ),
            ));
        }
        let project_repo = open_or_init(&project)?;
        let what = format!("clone of {} for session {session_id}", project.display());
        let base = crate::delivery::resolve_start(&project_repo, start)?;
        if is_repo_root(&target) {
            return Ok((target, base));
        }
        let head = project_repo
            .find_commit(base)
            .map_err(|e| Error::git(&what, e))?;
        let sessions = self.sessions_dir();
        std::fs::create_dir_all(&sessions).map_err(|e| io_error(&sessions, e))?;
        remove_abandoned_builds(&sessions);
        // Built aside and renamed into place, so that concurrent calls for one session and a
        // crash halfway leave either nothing or a whole clone at the target.
        let temp = sessions.join(format!(
            ".tmp-{}-{}",
            branch_name(session_id),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        ));
        let built = self.build_clone(&project, &temp, head.id(), session_id, &what);
        if let Err(err) = built {
            let _ = std::fs::remove_dir_all(&temp);
            return Err(err);
        }
        match std::fs::rename(&temp, &target) {
            Ok(()) => Ok((target, base)),
            Err(_) if is_repo_root(&target) => {
                let _ = std::fs::remove_dir_all(&temp);
                Ok((target, base))
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&temp);
                if target.exists() {
                    return Err(Error::new(
                        ErrorCode::Eexist,
                        format!("{}: exists but is not a git repository", target.display()),
                    ));
                }
                Err(io_error(&target, e))
            }
        }
    }

    fn build_clone(
        &self,
        project: &Path,
        dir: &Path,
        head: git2::Oid,
        session_id: &str,
        what: &str,
    ) -> Result<()> {
        let mut no_checkout = CheckoutBuilder::new();
        no_checkout.dry_run();
        // A local clone hard-links the object files; they are copied before anything can
        // see the clone (it is still the private build directory).
        let repo = RepoBuilder::new()
            .clone_local(CloneLocal::Local)
            .with_checkout(no_checkout)
            .clone(&project.to_string_lossy(), dir)
            .map_err(|e| Error::git(what, e))?;
        let objects = dir.join(".git").join("objects");
        unshare_objects(&objects).map_err(|e| io_error(&objects, e))?;
        let commit = repo.find_commit(head).map_err(|e| Error::git(what, e))?;
        let branch = branch_name(session_id);
        repo.branch(&branch, &commit, true)
            .map_err(|e| Error::git(what, e))?;
        repo.set_head(&format!("refs/heads/{branch}"))
            .map_err(|e| Error::git(what, e))?;
        let plain = !has_gitlinks(&commit);
        drop(commit);
        let mut checkout = CheckoutBuilder::new();
        checkout.force();
        if plain {
            // Checked out through the git directory opened as bare, into `dir` as the
            // target: with a work tree, libgit2 resolves every path with realpath(3) to look
            // up its attributes (ten failing readlink calls per file); without one it reads
            // the same .gitattributes from the index. Same files, modes, filters and index.
            // libgit2 refuses this for trees with submodules, which take the usual way.
            drop(repo);
            let repo = Repository::open_bare(dir.join(".git")).map_err(|e| Error::git(what, e))?;
            checkout.target_dir(dir);
            repo.checkout_head(Some(&mut checkout))
        } else {
            repo.checkout_head(Some(&mut checkout))
        }
        .map_err(|e| Error::git(what, e))?;
        Ok(())
    }

    /// Moves the clone to the trash and returns where it went; `None` when there is none.
    pub fn remove_session_clone(&self, session_id: &str) -> Result<Option<PathBuf>> {
        let source = self.clone_path(session_id)?;
        if !source.exists() {
            return Ok(None);
        }
        let name = branch_name(session_id);
        let bin = self.new_trash_bin(&name)?;
        let destination = bin.join(&name);
        match std::fs::rename(&source, &destination) {
            Ok(()) => Ok(Some(destination)),
            Err(e) => {
                let _ = std::fs::remove_dir(&bin);
                if e.kind() == std::io::ErrorKind::NotFound && !source.exists() {
                    // A concurrent removal took it first.
                    Ok(None)
                } else {
                    Err(io_error(&source, e))
                }
            }
        }
    }

    /// `${baseDir}/.trash/<UTC timestamp>[-n]`, one that does not hold `name` yet (the same
    /// session removed twice within a millisecond gets a second bin).
    pub fn new_trash_bin(&self, name: &str) -> Result<PathBuf> {
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ").to_string();
        let trash = self.trash_dir();
        for n in 0u32.. {
            let bin = match n {
                0 => trash.join(&stamp),
                n => trash.join(format!("{stamp}-{n}")),
            };
            std::fs::create_dir_all(&bin).map_err(|e| io_error(&bin, e))?;
            if !bin.join(name).exists() {
                return Ok(bin);
            }
        }
        unreachable!("u32 trash bins exhausted")
    }

    /// Session ids that have a clone.
    pub fn list_session_clones(&self) -> Result<Vec<String>> {
        let dir = self.sessions_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error(&dir, e)),
        };
        let mut ids: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_prefix("session-")
                    .map(str::to_string)
            })
            .filter(|id| validate_session_id(id).is_ok())
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// Deletes trash entries older than `older_than`; returns what was deleted.
    pub fn empty_trash(&self, older_than: Duration) -> Result<Vec<PathBuf>> {
        let dir = self.trash_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error(&dir, e)),
        };
        let now = SystemTime::now();
        let mut removed = Vec::new();
        for entry in entries.filter_map(|e| e.ok()) {
            let path = entry.path();
            let age = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| now.duration_since(t).ok())
                .unwrap_or_default();
            if age >= older_than {
                std::fs::remove_dir_all(&path).map_err(|e| io_error(&path, e))?;
                removed.push(path);
            }
        }
        removed.sort();
        Ok(removed)
    }

    /// Whether `dir` is itself the root of a git repository.
    pub fn is_git_repo(dir: &Path) -> bool {
        is_repo_root(dir)
    }

    /// Opens a session's clone.
    pub fn open(&self, session_id: &str) -> Result<Repository> {
        let path = self.clone_path(session_id)?;
        Repository::open(&path).map_err(|e| Error::git(&format!("clone {}", path.display()), e))
    }
}

#[cfg(test)]
#[path = "clone_manager_tests.rs"]
mod tests;
