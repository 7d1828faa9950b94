//! `export` against the git CLI: the branch it writes, the snapshot it makes (the tree
//! `git add -A` would write), and a project left byte-for-byte as it was otherwise.

use std::os::unix::fs::{symlink, PermissionsExt};

use super::hostile::{arm, planted};
use super::*;
use crate::delivery::{export, Author, ExportOptions, Exported};
use crate::error::{Error, ErrorCode};

/// A project with two commits and a session clone of it, as the library makes one.
pub struct Session {
    pub root: Scratch,
    pub project: PathBuf,
    pub clone: PathBuf,
}

impl Session {
    pub fn new(name: &str) -> Session {
        let root = Scratch::new(name);
        let project = root.0.join("project");
        let repo = init(&project);
        write(&project, "a.txt", "a\n");
        write(&project, "src/lib.rs", "fn main() {}\n");
        commit_all(&repo, "one");
        write(&project, "a.txt", "a2\n");
        commit_all(&repo, "two");
        let clones = crate::clone::CloneManager::new(root.0.join("base"));
        let (clone, _) = clones
            .create_session_clone_at(&project, "s1", None)
            .unwrap();
        Session {
            root,
            project,
            clone,
        }
    }

    pub fn staging(&self) -> PathBuf {
        self.root.0.join("base/delivery")
    }

    pub fn export(&self, opts: ExportOptions) -> Result<Exported, Error> {
        self.export_with(opts, Limits::default())
    }

    pub fn export_with(&self, opts: ExportOptions, limits: Limits) -> Result<Exported, Error> {
        let author = Author {
            name: "Host".into(),
            email: "host@example.com".into(),
        };
        export(
            self.clone.clone(),
            self.project.clone(),
            self.staging(),
            opts,
            author,
            limits,
        )
    }
}

pub fn options(branch: &str) -> ExportOptions {
    ExportOptions {
        branch: branch.into(),
        uncommitted: false,
        message: "snapshot".into(),
        force: false,
    }
}

/// What the export must leave as it was: status, HEAD, the index's bytes, every ref but
/// the exported one, the config and hooks.
pub(super) fn project_state(project: &Path, except: &str) -> Vec<String> {
    let refs = git(
        project,
        &["for-each-ref", "--format=%(refname) %(objectname)"],
    );
    let refs: Vec<&str> = refs.lines().filter(|l| !l.starts_with(except)).collect();
    let read = |p: &str| std::fs::read(project.join(".git").join(p)).unwrap_or_default();
    vec![
        git(project, &["status", "--porcelain", "--untracked-files=all"]),
        String::from_utf8_lossy(&read("HEAD")).into_owned(),
        digest(&read("index")),
        refs.join("\n"),
        String::from_utf8_lossy(&read("config")).into_owned(),
        git(project, &["rev-parse", "HEAD"]),
        hooks(project),
    ]
}

fn digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Every hook file's name and the digest of its bytes.
fn hooks(project: &Path) -> String {
    let mut found: Vec<String> = std::fs::read_dir(project.join(".git/hooks"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| {
                    format!(
                        "{:?} {}",
                        e.file_name(),
                        digest(&std::fs::read(e.path()).unwrap_or_default())
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.join("\n")
}

/// `git count-objects -v`: loose objects, packs and the objects in them.
pub(super) fn object_counts(project: &Path) -> String {
    git(project, &["count-objects", "-v"])
}

#[test]
fn export_writes_the_branch_and_nothing_else() {
    let s = Session::new("export");
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "a.txt", "agent\n");
    write(&s.clone, "new/file.txt", "new\n");
    commit_all(&clone, "agent one");
    write(&s.clone, "b.txt", "b\n");
    commit_all(&clone, "agent two");
    write(&s.clone, "a.txt", "uncommitted\n");
    write(
        &s.project,
        "user-work.txt",
        "the user's own uncommitted file\n",
    );
    let before = project_state(&s.project, "refs/heads/session/s1");
    let done = s.export(options("session/s1")).unwrap();
    assert_eq!(before, project_state(&s.project, "refs/heads/session/s1"));
    let head = git(&s.clone, &["rev-parse", "HEAD"]);
    assert_eq!(git(&s.project, &["rev-parse", "session/s1"]), head);
    assert_eq!(done.commit.to_string(), head.trim());
    assert_eq!((done.snapshot, done.previous), (None, None));
    assert!(done.objects_copied >= 6, "{done:?}");
    assert_eq!(
        git(&s.project, &["log", "--format=%s", "HEAD..session/s1"]),
        "agent two\nagent one\n"
    );
    git(&s.project, &["fsck", "--strict", "--no-dangling"]);
    assert_eq!(std::fs::read_dir(s.staging()).unwrap().count(), 0);
}

#[test]
fn uncommitted_work_is_the_tree_git_add_all_would_write() {
    let s = Session::new("snapshot");
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "committed.txt", "c\n");
    commit_all(&clone, "agent");
    write(&s.clone, "a.txt", "modified\n");
    std::fs::remove_file(s.clone.join("src/lib.rs")).unwrap();
    write(&s.clone, "untracked/deep/x.txt", "x\n");
    write(&s.clone, "run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(
        s.clone.join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    symlink("../etc/passwd", s.clone.join("link")).unwrap();
    write(&s.clone, ".gitignore", "ignored.txt\n");
    write(&s.clone, "ignored.txt", "not taken\n");
    write(&s.clone, "staged.txt", "staged\n");
    git(&s.clone, &["add", "staged.txt"]);
    let head_before = git(&s.clone, &["rev-parse", "HEAD"]);
    let index_before = std::fs::read(s.clone.join(".git/index")).unwrap();
    let done = s
        .export(ExportOptions {
            uncommitted: true,
            ..options("with-work")
        })
        .unwrap();
    let snapshot = done.snapshot.expect("a snapshot").to_string();
    assert_eq!(
        git(&s.project, &["rev-parse", "with-work"]).trim(),
        snapshot
    );
    assert_eq!(git(&s.project, &["rev-parse", "with-work^"]), head_before);
    assert_eq!(git(&s.clone, &["rev-parse", "HEAD"]), head_before);
    assert_eq!(
        std::fs::read(s.clone.join(".git/index")).unwrap(),
        index_before
    );
    // The same work, committed by the git CLI in a copy of the clone.
    let copy = s.root.0.join("copy");
    let cp = Command::new("cp")
        .arg("-a")
        .arg(&s.clone)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(cp.success());
    git(&copy, &["add", "-A"]);
    let expected = git(&copy, &["write-tree"]);
    assert_eq!(
        git(&s.project, &["rev-parse", "with-work^{tree}"]),
        expected
    );
    git(&s.project, &["fsck", "--strict", "--no-dangling"]);
}

#[test]
fn nothing_uncommitted_exports_head_without_a_snapshot() {
    let s = Session::new("clean");
    let done = s
        .export(ExportOptions {
            uncommitted: true,
            ..options("clean")
        })
        .unwrap();
    assert_eq!(done.snapshot, None);
    assert_eq!(done.objects_copied, 0, "the project has every object");
}

#[test]
fn an_existing_branch_needs_force_and_the_checked_out_one_is_refused() {
    let s = Session::new("force");
    git(&s.project, &["branch", "taken"]);
    let taken = git(&s.project, &["rev-parse", "taken"]);
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "z.txt", "z\n");
    commit_all(&clone, "agent");
    let err = s.export(options("taken")).unwrap_err();
    assert_eq!(err.code, ErrorCode::Eexist, "{err}");
    assert_eq!(git(&s.project, &["rev-parse", "taken"]), taken);
    let done = s
        .export(ExportOptions {
            force: true,
            ..options("taken")
        })
        .unwrap();
    assert_eq!(done.previous.unwrap().to_string(), taken.trim());
    let err = s
        .export(ExportOptions {
            force: true,
            ..options("main")
        })
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument, "{err}");
    git(
        &s.project,
        &["worktree", "add", "-q", "../wt", "-b", "in-worktree"],
    );
    let err = s
        .export(ExportOptions {
            force: true,
            ..options("in-worktree")
        })
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument, "{err}");
    for bad in ["-x", "a..b", "HEAD", "refs/heads/x"] {
        let err = s.export(options(bad)).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument, "{bad}: {err}");
    }
}

#[test]
fn an_armed_clone_runs_nothing_during_export() {
    let (s, canaries) = (Session::new("armed"), Scratch::new("canaries"));
    let clone = Repository::open(&s.clone).unwrap();
    arm(&s.clone, &canaries.0);
    commit_all(&clone, "attributes");
    write(&s.clone, "a.txt", "dirty\n");
    write(&s.clone, "untracked.txt", "u\n");
    s.export(ExportOptions {
        uncommitted: true,
        ..options("armed")
    })
    .unwrap();
    assert_eq!(planted(&canaries.0), Vec::<String>::new());
}

pub(super) fn refused_without_a_trace(s: &Session, limits: Limits, code: ErrorCode) -> Error {
    let before = (project_state(&s.project, "-"), object_counts(&s.project));
    let err = s.export_with(options("bad"), limits).unwrap_err();
    assert_eq!(err.code, code, "{err}");
    assert_eq!(
        before,
        (project_state(&s.project, "-"), object_counts(&s.project))
    );
    assert_eq!(std::fs::read_dir(s.staging()).unwrap().count(), 0);
    err
}

#[test]
fn a_blob_over_the_bound_and_a_deep_tree_are_refused_before_anything_is_written() {
    let s = Session::new("bounds");
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "big.bin", vec![0u8; 2 << 20]);
    commit_all(&clone, "big");
    let limits = Limits {
        max_object_bytes: 1 << 20,
        ..Limits::default()
    };
    refused_without_a_trace(&s, limits, ErrorCode::LimitExceeded);

    let s = Session::new("deep");
    let clone = Repository::open(&s.clone).unwrap();
    let deep: String = (0..40).map(|i| format!("d{i}/")).collect();
    write(&s.clone, &format!("{deep}leaf.txt"), "leaf\n");
    commit_all(&clone, "deep");
    let limits = Limits {
        max_tree_depth: 30,
        ..Limits::default()
    };
    refused_without_a_trace(&s, limits, ErrorCode::LimitExceeded);
    let limits = Limits {
        max_objects: 10,
        ..Limits::default()
    };
    refused_without_a_trace(&s, limits, ErrorCode::LimitExceeded);
}

/// A commit whose tree is `raw` (tree bytes written as they are), on the clone's HEAD.
pub(super) fn commit_raw_tree(clone: &Repository, raw: &[u8]) {
    let odb = clone.odb().unwrap();
    let tree = odb.write(git2::ObjectType::Tree, raw).unwrap();
    let tree = clone.find_tree(tree).unwrap();
    let sig = Signature::now("Agent", "agent@example.com").unwrap();
    let head = clone.head().unwrap().peel_to_commit().unwrap();
    clone
        .commit(Some("HEAD"), &sig, &sig, "raw", &tree, &[&head])
        .unwrap();
}

#[test]
fn a_tree_naming_dot_git_and_a_corrupt_object_are_refused() {
    let s = Session::new("dotgit");
    let clone = Repository::open(&s.clone).unwrap();
    let blob = clone.blob(b"[core]\n\thooksPath = /tmp\n").unwrap();
    let mut raw = b"100644 .GIT\0".to_vec();
    raw.extend_from_slice(blob.as_bytes());
    commit_raw_tree(&clone, &raw);
    let err = refused_without_a_trace(&s, Limits::default(), ErrorCode::Git);
    assert!(err.message.contains(".git"), "{err}");

    let s = Session::new("corrupt");
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "c.txt", "original\n");
    commit_all(&clone, "c");
    let id = git(&s.clone, &["rev-parse", "HEAD:c.txt"]);
    let (fan, rest) = id.trim().split_at(2);
    let path = s.clone.join(".git/objects").join(fan).join(rest);
    let other = clone.blob(b"another content\n").unwrap().to_string();
    let (ofan, orest) = other.split_at(2);
    let forged = std::fs::read(s.clone.join(".git/objects").join(ofan).join(orest)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&path, forged).unwrap();
    refused_without_a_trace(&s, Limits::default(), ErrorCode::Git);
}
