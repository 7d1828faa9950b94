//! Tests of `delivery` against repositories made with git2 in temporary directories,
//! checked against what the git CLI says of them.

mod bounds;
mod cli_agreement;
mod deadline;
mod export;
mod fsck;
mod hostile;
mod hostile_git_dir;
mod push;
mod start;
mod uncommitted_patch;

use std::path::{Path, PathBuf};
use std::process::Command;

use git2::{IndexAddOption, Oid, Repository, Signature};

use super::{read_changes, Changes, ChangesOptions, Limits};
pub use crate::scratch_dir::Scratch;

pub fn init(dir: &Path) -> Repository {
    let repo = Repository::init(dir).unwrap();
    repo.set_head("refs/heads/main").unwrap();
    repo
}

pub fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Commits the whole work tree (additions, changes and deletions) on HEAD.
pub fn commit_all(repo: &Repository, message: &str) -> Oid {
    let mut index = repo.index().unwrap();
    index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
    index.update_all(["*"], None).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = Signature::now("Agent", "agent@example.com").unwrap();
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    let parents: Vec<_> = parent.iter().collect();
    repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &parents)
        .unwrap()
}

/// The git CLI in `dir`, with no config but its own; its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "safe.directory=*", "-c", "core.quotepath=off"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn read(dir: &Path, base: Oid) -> Changes {
    read_with(dir, base, Limits::default(), true)
}

pub fn read_with(dir: &Path, base: Oid, limits: Limits, patch: bool) -> Changes {
    let opts = ChangesOptions {
        patch,
        max_patch_bytes: 1 << 20,
    };
    read_changes(dir, base, &opts, &limits).unwrap()
}

pub fn read_err(dir: &Path, base: Oid, limits: Limits) -> crate::error::Error {
    let opts = ChangesOptions {
        patch: true,
        max_patch_bytes: 1 << 20,
    };
    read_changes(dir, base, &opts, &limits).unwrap_err()
}
