//! A clone set up by a hostile agent: nothing it configured runs, and a `.git` that leads
//! out of the clone is refused.

use std::os::unix::fs::{symlink, PermissionsExt};

use super::*;
use crate::error::ErrorCode;

pub(super) fn simple(dir: &Path) -> (Repository, Oid) {
    let repo = init(dir);
    write(dir, "a.txt", "1\n");
    let base = commit_all(&repo, "base");
    write(dir, "a.txt", "2\n");
    commit_all(&repo, "two");
    (repo, base)
}

/// Every way the git CLI runs a program the repository names, each writing a canary.
pub(super) fn arm(dir: &Path, canaries: &Path) {
    let script = canaries.join("canary.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'/\"$1\"\ncat\n", canaries.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = |what: &str| format!("'{}' {what}", script.display());
    let repo = Repository::open(dir).unwrap();
    let mut config = repo
        .config()
        .unwrap()
        .open_level(git2::ConfigLevel::Local)
        .unwrap();
    config.set_str("core.fsmonitor", &run("fsmonitor")).unwrap();
    config.set_str("filter.x.clean", &run("clean")).unwrap();
    config.set_str("filter.x.smudge", &run("smudge")).unwrap();
    config.set_str("filter.x.process", &run("process")).unwrap();
    config.set_str("diff.x.textconv", &run("textconv")).unwrap();
    config.set_str("diff.external", &run("external")).unwrap();
    write(dir, ".gitattributes", "* filter=x diff=x\n");
    for hook in [
        "pre-commit",
        "post-checkout",
        "post-index-change",
        "reference-transaction",
    ] {
        let path = dir.join(".git/hooks").join(hook);
        write(
            dir,
            &format!(".git/hooks/{hook}"),
            format!("#!/bin/sh\ntouch '{}'/{hook}\n", canaries.display()),
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

pub(super) fn planted(canaries: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(canaries)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n != "canary.sh")
        .collect();
    found.sort();
    found
}

#[test]
fn nothing_the_clone_configures_runs() {
    let (scratch, canaries) = (Scratch::new("armed"), Scratch::new("canaries"));
    let dir = &scratch.0;
    let (repo, base) = simple(dir);
    arm(dir, &canaries.0);
    commit_all(&repo, "attributes");
    write(dir, "a.txt", "3\n");
    let got = read(dir, base);
    assert!(got.patch.unwrap().contains("+2"));
    assert_eq!(planted(&canaries.0), Vec::<String>::new());
    // The trap is armed: the git CLI runs them.
    git(dir, &["status", "--porcelain"]);
    git(dir, &["diff", &base.to_string(), "HEAD"]);
    assert!(!planted(&canaries.0).is_empty());
}

pub(super) fn refused(dir: &Path, base: Oid) {
    let err = read_err(dir, base, Limits::default());
    assert_eq!(err.code, ErrorCode::Git, "{err}");
    assert!(err.message.contains("refused"), "{err}");
}

#[test]
fn a_dot_git_that_is_a_symlink_or_gitfile_is_refused() {
    let (clone, outside) = (Scratch::new("clone"), Scratch::new("outside"));
    let (_, base) = simple(&outside.0);
    std::fs::create_dir_all(&clone.0).unwrap();
    symlink(outside.0.join(".git"), clone.0.join(".git")).unwrap();
    refused(&clone.0, base);
    std::fs::remove_file(clone.0.join(".git")).unwrap();
    write(
        &clone.0,
        ".git",
        format!("gitdir: {}\n", outside.0.join(".git").display()),
    );
    refused(&clone.0, base);
}

#[test]
fn alternates_commondir_includes_and_symlinked_objects_are_refused() {
    let (clone, outside) = (Scratch::new("clone"), Scratch::new("outside"));
    let (_, base) = simple(&clone.0);
    simple(&outside.0);
    let git_dir = clone.0.join(".git");
    let alternates = outside.0.join(".git/objects").display().to_string();
    write(&git_dir, "objects/info/alternates", &alternates);
    refused(&clone.0, base);
    std::fs::remove_file(git_dir.join("objects/info/alternates")).unwrap();
    read(&clone.0, base);

    write(&git_dir, "commondir", "../../outside/.git\n");
    refused(&clone.0, base);
    std::fs::remove_file(git_dir.join("commondir")).unwrap();

    let config = std::fs::read_to_string(git_dir.join("config")).unwrap();
    write(
        &git_dir,
        "config",
        format!("{config}[ Include ]\n\tpath = /etc/gitconfig\n"),
    );
    refused(&clone.0, base);
    write(
        &git_dir,
        "config",
        format!("{config}[core]\n\texcludesFile = /etc/passwd\n"),
    );
    refused(&clone.0, base);
    write(&git_dir, "config", &config);

    symlink("/etc/passwd", git_dir.join("objects/info/evil")).unwrap();
    refused(&clone.0, base);
    std::fs::remove_file(git_dir.join("objects/info/evil")).unwrap();
    symlink(outside.0.join(".git/HEAD"), git_dir.join("refs/heads/evil")).unwrap();
    refused(&clone.0, base);
}

#[test]
fn core_worktree_does_not_move_the_work_tree_out_of_the_clone() {
    let (clone, outside) = (Scratch::new("clone"), Scratch::new("outside"));
    let (repo, base) = simple(&clone.0);
    write(&outside.0, "host-secret.txt", "secret\n");
    write(&clone.0, "mine.txt", "mine\n");
    repo.config()
        .unwrap()
        .open_level(git2::ConfigLevel::Local)
        .unwrap()
        .set_str("core.worktree", &outside.0.display().to_string())
        .unwrap();
    let got = read(&clone.0, base);
    let paths: Vec<_> = got.uncommitted.iter().map(|u| u.path.as_str()).collect();
    assert_eq!(paths, vec!["mine.txt"]);
}
