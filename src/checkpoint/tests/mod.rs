//! Tests of `checkpoint`: clones made and checked with the git CLI in scratch folders, and
//! containers on the machine's engines (dockerd and Podman).

mod container;
mod repository;
mod store;

use std::path::Path;
use std::process::Command;

use super::{take_checkpoint, CheckpointRecord, TakeRequest};
use crate::delivery::Limits;
pub use crate::scratch_dir::Scratch;

/// The git CLI in `dir`, with no config but its own; its stdout, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = git_output(dir, args);
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .trim_end()
        .to_string()
}

pub fn git_output(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .args(["-c", "safe.directory=*", "-c", "core.quotepath=off"])
        .args([
            "-c",
            "user.name=Agent",
            "-c",
            "user.email=agent@example.com",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap()
}

pub fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// A clone as an agent leaves one: three commits on `feature` (branched from `main`), a
/// staged change, an unstaged edit over it, untracked files, an ignored one.
pub fn busy_clone(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    write(dir, ".gitignore", "*.log\n");
    write(dir, "a.txt", "a1\n");
    write(dir, "b.txt", "b1\n");
    write(dir, "src/lib.rs", "fn main() {}\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "one"]);
    git(dir, &["checkout", "-q", "-b", "feature"]);
    write(dir, "a.txt", "a2\n");
    git(dir, &["commit", "-q", "-am", "two"]);
    write(dir, "c.txt", "c\n");
    git(dir, &["add", "c.txt"]);
    git(dir, &["commit", "-q", "-m", "three"]);
    write(dir, "a.txt", "a3 staged\n");
    write(dir, "staged-only.txt", "new and staged\n");
    git(dir, &["add", "a.txt", "staged-only.txt"]);
    write(dir, "a.txt", "a4 unstaged over staged\n");
    write(dir, "b.txt", "b2 unstaged\n");
    std::fs::remove_file(dir.join("src/lib.rs")).unwrap();
    write(dir, "new.txt", "untracked\n");
    write(dir, "dir/u.txt", "untracked in a folder\n");
    write(dir, "run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(
        dir.join("run.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("a.txt", dir.join("link")).unwrap();
    write(dir, "debug.log", "ignored\n");
}

/// `git add -A && git write-tree` in a copy of `clone` (the clone itself untouched).
pub fn add_all_tree(clone: &Path, scratch: &Scratch) -> String {
    let copy = scratch.path(&format!("copy-{}", uuid::Uuid::new_v4().simple()));
    let status = Command::new("cp")
        .arg("-a")
        .arg(clone)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    git(&copy, &["add", "-A"]);
    let tree = git(&copy, &["write-tree"]);
    std::fs::remove_dir_all(&copy).unwrap();
    tree
}

/// What the clone's HEAD, branch, index and work tree are, as the git CLI says.
#[derive(Debug, PartialEq, Eq)]
pub struct CliState {
    pub head: String,
    pub branch: Option<String>,
    pub index_tree: String,
    pub worktree_tree: String,
    pub status: String,
}

pub fn cli_state(clone: &Path, scratch: &Scratch) -> CliState {
    let branch = git_output(clone, &["symbolic-ref", "-q", "HEAD"]);
    CliState {
        head: git(clone, &["rev-parse", "HEAD"]),
        branch: branch
            .status
            .success()
            .then(|| String::from_utf8(branch.stdout).unwrap().trim().to_string()),
        index_tree: git(clone, &["write-tree"]),
        worktree_tree: add_all_tree(clone, scratch),
        status: git(clone, &["status", "--porcelain=v1", "--ignored"]),
    }
}

pub fn take(base: &Path, session: &str, clone: &Path, label: &str) -> CheckpointRecord {
    take_checkpoint(TakeRequest {
        base_dir: base.to_path_buf(),
        session: session.into(),
        clone: clone.to_path_buf(),
        label: Some(label.into()),
        limits: Limits::default(),
    })
    .unwrap()
}
