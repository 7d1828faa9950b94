//! Session clones (CONTRACT §5): a full repository per session at
//! `${baseDir}/sessions/session-<id>`, sharing no inode with the project (its object files
//! are copies, reflinked where the file system can), on branch `session-<id>` from the
//! project's HEAD. Removal moves a clone to `${baseDir}/.trash/<timestamp>/`; only
//! `empty_trash` deletes.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use git2::build::{CheckoutBuilder, CloneLocal, RepoBuilder};
use git2::Repository;

use super::object_copy::unshare_objects;
use super::project_repo::{git_error, is_repo_root, open_or_init};
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
fn remove_abandoned_builds(sessions: &Path) {
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
        let project = std::fs::canonicalize(project).map_err(|e| io_error(project, e))?;
        let project_repo = open_or_init(&project)?;
        let what = format!("clone of {} for session {session_id}", project.display());
        let head = project_repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .map_err(|e| git_error(&what, e))?;

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
            Ok(()) => Ok(target),
            Err(_) if is_repo_root(&target) => {
                let _ = std::fs::remove_dir_all(&temp);
                Ok(target)
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
            .map_err(|e| git_error(what, e))?;
        let objects = dir.join(".git").join("objects");
        unshare_objects(&objects).map_err(|e| io_error(&objects, e))?;
        let commit = repo.find_commit(head).map_err(|e| git_error(what, e))?;
        let branch = branch_name(session_id);
        repo.branch(&branch, &commit, true)
            .map_err(|e| git_error(what, e))?;
        repo.set_head(&format!("refs/heads/{branch}"))
            .map_err(|e| git_error(what, e))?;
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
            let repo = Repository::open_bare(dir.join(".git")).map_err(|e| git_error(what, e))?;
            checkout.target_dir(dir);
            repo.checkout_head(Some(&mut checkout))
        } else {
            repo.checkout_head(Some(&mut checkout))
        }
        .map_err(|e| git_error(what, e))?;
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
    fn new_trash_bin(&self, name: &str) -> Result<PathBuf> {
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
        Repository::open(&path).map_err(|e| git_error(&format!("clone {}", path.display()), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Scratch(PathBuf);

    impl Scratch {
        fn new(prefix: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("ci-{prefix}-{}", uuid::Uuid::new_v4()));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn plain_project(dir: &Path) {
        std::fs::write(dir.join("main.rs"), "fn main() {}\n").unwrap();
        std::fs::create_dir_all(dir.join("node_modules")).unwrap();
        std::fs::write(dir.join("node_modules").join("dep.js"), "").unwrap();
    }

    #[test]
    fn clones_a_plain_project_on_the_session_branch_and_trashes_it() {
        let project = Scratch::new("project");
        let base = Scratch::new("base");
        plain_project(&project.0);
        let manager = CloneManager::new(base.0.clone());

        let path = manager.create_session_clone(&project.0, "s1").unwrap();
        assert_eq!(path, base.0.join("sessions").join("session-s1"));
        let clone = Repository::open(&path).unwrap();
        assert_eq!(clone.head().unwrap().shorthand().ok(), Some("session-s1"));
        let project_repo = Repository::open(&project.0).unwrap();
        assert_eq!(
            clone.head().unwrap().target(),
            project_repo.head().unwrap().target()
        );
        assert!(path.join("main.rs").is_file());
        assert!(path.join(".gitignore").is_file());
        assert!(!path.join("node_modules").exists());
        assert_eq!(
            clone.find_remote("origin").unwrap().url().ok(),
            Some(std::fs::canonicalize(&project.0).unwrap().to_str().unwrap())
        );

        assert_eq!(
            manager.create_session_clone(&project.0, "s1").unwrap(),
            path
        );
        assert_eq!(manager.list_session_clones().unwrap(), vec!["s1"]);

        let trashed = manager.remove_session_clone("s1").unwrap().unwrap();
        assert!(trashed.starts_with(base.0.join(".trash")));
        assert!(Repository::open(&trashed).is_ok());
        assert_eq!(manager.remove_session_clone("s1").unwrap(), None);
        assert!(manager.list_session_clones().unwrap().is_empty());
        assert!(manager
            .empty_trash(Duration::from_secs(3600))
            .unwrap()
            .is_empty());
        assert_eq!(manager.empty_trash(Duration::ZERO).unwrap().len(), 1);
        assert!(!trashed.exists());
    }

    #[test]
    fn the_same_session_trashed_twice_in_a_row_keeps_both() {
        let project = Scratch::new("project");
        let base = Scratch::new("base");
        plain_project(&project.0);
        let manager = CloneManager::new(base.0.clone());
        let mut trashed = Vec::new();
        for _ in 0..3 {
            manager.create_session_clone(&project.0, "again").unwrap();
            trashed.push(manager.remove_session_clone("again").unwrap().unwrap());
        }
        assert!(trashed.iter().all(|p| p.join(".git").is_dir()));
        trashed.dedup();
        assert_eq!(trashed.len(), 3);
    }

    #[test]
    fn concurrent_first_clones_of_a_plain_project_share_one_initial_commit() {
        let project = Scratch::new("project");
        let base = Scratch::new("base");
        plain_project(&project.0);
        let manager = std::sync::Arc::new(CloneManager::new(base.0.clone()));
        let heads: Vec<_> = (0..4)
            .map(|i| {
                let manager = manager.clone();
                let project = project.0.clone();
                std::thread::spawn(move || {
                    let path = manager
                        .create_session_clone(&project, &format!("p{i}"))
                        .unwrap();
                    Repository::open(path).unwrap().head().unwrap().target()
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().unwrap())
            .collect();
        let project_repo = Repository::open(&project.0).unwrap();
        let head = project_repo.head().unwrap().target();
        assert!(heads.iter().all(|h| *h == head));
        let mut walk = project_repo.revwalk().unwrap();
        walk.push_head().unwrap();
        assert_eq!(walk.count(), 1);
    }

    #[test]
    fn an_embedded_repository_in_a_plain_project_becomes_a_gitlink() {
        let project = Scratch::new("project");
        let base = Scratch::new("base");
        plain_project(&project.0);
        let vendored = project.0.join("vendor").join("lib");
        std::fs::create_dir_all(&vendored).unwrap();
        std::fs::write(vendored.join("lib.rs"), "").unwrap();
        let inner = Repository::init(&vendored).unwrap();
        let mut index = inner.index().unwrap();
        index.add_path(Path::new("lib.rs")).unwrap();
        let tree = inner.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@localhost").unwrap();
        let inner_head = inner
            .commit(Some("HEAD"), &sig, &sig, "vendored", &tree, &[])
            .unwrap();

        let manager = CloneManager::new(base.0.clone());
        let path = manager.create_session_clone(&project.0, "v").unwrap();
        let project_index = Repository::open(&project.0).unwrap().index().unwrap();
        let link = project_index.get_path(Path::new("vendor/lib"), 0).unwrap();
        assert_eq!((link.mode, link.id), (0o160000, inner_head));
        assert!(path.join("vendor").join("lib").is_dir());
        assert!(!path.join("vendor").join("lib").join("lib.rs").exists());
    }

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@localhost"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn the_work_tree_is_what_the_git_cli_checks_out() {
        use std::os::unix::fs::PermissionsExt;
        let project = Scratch::new("project");
        let base = Scratch::new("base");
        let p = &project.0;
        std::fs::create_dir_all(p.join("sub")).unwrap();
        std::fs::write(
            p.join(".gitattributes"),
            "*.crlf text eol=crlf\n*.id ident\n",
        )
        .unwrap();
        std::fs::write(
            p.join("sub").join(".gitattributes"),
            "*.txt text eol=crlf\n",
        )
        .unwrap();
        std::fs::write(p.join("a.crlf"), "one\ntwo\n").unwrap();
        std::fs::write(p.join("sub").join("b.txt"), "three\nfour\n").unwrap();
        std::fs::write(p.join("c.txt"), "five\n").unwrap();
        std::fs::write(p.join("d.id"), "$Id$\n").unwrap();
        std::fs::write(p.join("run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(p.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("sub/b.txt", p.join("link")).unwrap();
        git(p, &["init", "-q", "-b", "main"]);
        git(p, &["add", "."]);
        git(p, &["commit", "-q", "-m", "files"]);

        let ours = CloneManager::new(base.0.clone())
            .create_session_clone(p, "cli")
            .unwrap();
        let theirs = base.0.join("cli");
        git(
            &base.0,
            &["clone", "-q", "--local", p.to_str().unwrap(), "cli"],
        );
        for name in [
            "a.crlf",
            "sub/b.txt",
            "c.txt",
            "d.id",
            "run.sh",
            ".gitattributes",
        ] {
            assert_eq!(
                std::fs::read(ours.join(name)).unwrap(),
                std::fs::read(theirs.join(name)).unwrap(),
                "{name}"
            );
            let mode = |dir: &Path| {
                std::fs::metadata(dir.join(name))
                    .unwrap()
                    .permissions()
                    .mode()
            };
            assert_eq!(mode(&ours), mode(&theirs), "{name}");
        }
        assert_eq!(
            std::fs::read(ours.join("a.crlf")).unwrap(),
            b"one\r\ntwo\r\n"
        );
        assert_eq!(
            std::fs::read(ours.join("sub/b.txt")).unwrap(),
            b"three\r\nfour\r\n"
        );
        assert_ne!(std::fs::read(ours.join("d.id")).unwrap(), b"$Id$\n");
        assert_eq!(
            std::fs::read_link(ours.join("link")).unwrap(),
            Path::new("sub/b.txt")
        );
        assert_eq!(git(&ours, &["status", "--porcelain"]), "");
        assert_eq!(
            git(&ours, &["rev-parse", "--is-bare-repository"]),
            "false\n"
        );
        assert_eq!(git(&ours, &["branch", "--show-current"]), "session-cli\n");
    }

    /// (st_dev, st_ino) of every regular file under `dir`.
    fn inodes(dir: &Path) -> std::collections::HashSet<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let mut found = std::collections::HashSet::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(d) = pending.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let meta = std::fs::symlink_metadata(entry.as_ref().unwrap().path()).unwrap();
                if meta.is_dir() {
                    pending.push(entry.unwrap().path());
                } else if meta.is_file() {
                    found.insert((meta.dev(), meta.ino()));
                }
            }
        }
        found
    }

    #[test]
    fn the_clone_shares_no_inode_with_the_project_and_cannot_damage_it() {
        let project = Scratch::new("project");
        let base = Scratch::new("base");
        let p = &project.0;
        plain_project(p);
        git(p, &["init", "-q", "-b", "main"]);
        git(p, &["add", "."]);
        git(p, &["commit", "-q", "-m", "one"]);
        std::fs::write(p.join("later.txt"), "loose\n").unwrap();
        git(p, &["add", "."]);
        git(p, &["commit", "-q", "-m", "two"]);
        git(p, &["repack", "-dq"]);
        std::fs::write(p.join("loose.txt"), "a loose object\n").unwrap();
        git(p, &["add", "."]);
        git(p, &["commit", "-q", "-m", "three"]);

        let clone = CloneManager::new(base.0.clone())
            .create_session_clone(p, "inodes")
            .unwrap();
        let shared: Vec<_> = inodes(&clone).intersection(&inodes(p)).cloned().collect();
        assert!(shared.is_empty(), "shared inodes: {shared:?}");
        git(&clone, &["fsck", "--strict", "--no-dangling"]);
        assert_eq!(
            git(&clone, &["log", "--format=%s"]),
            git(p, &["log", "--format=%s"])
        );
        for entry in std::fs::read_dir(clone.join(".git/objects/pack")).unwrap() {
            let path = entry.unwrap().path();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o644))
                .unwrap();
            std::fs::write(&path, "").unwrap();
        }
        assert_eq!(git(p, &["log", "--format=%s"]), "three\ntwo\none\n");
        git(p, &["fsck", "--strict", "--no-dangling"]);
    }

    #[test]
    fn a_missing_or_file_project_is_a_file_error() {
        let base = Scratch::new("base");
        let manager = CloneManager::new(base.0.clone());
        let missing = manager
            .create_session_clone(&base.0.join("nope"), "x")
            .unwrap_err();
        assert_eq!(missing.code, ErrorCode::Enoent);
        std::fs::write(base.0.join("file"), "").unwrap();
        let file = manager
            .create_session_clone(&base.0.join("file"), "x")
            .unwrap_err();
        assert_eq!(file.code, ErrorCode::Enotdir);
    }
}
