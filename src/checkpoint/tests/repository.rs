//! The repository half: a busy clone checkpointed, then wrecked (history rewritten and
//! collected, files changed and deleted, symlinks planted out of the clone), restored to
//! what the git CLI saw before; a fork that goes its own way.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::*;
use crate::checkpoint::{
    fork_checkpoint, fork_current, restore_checkpoint, ForkRequest, RestoreRequest,
};

fn restore(
    base: &Path,
    session: &str,
    clone: &Path,
    id: &str,
) -> crate::error::Result<super::super::Restored> {
    restore_checkpoint(RestoreRequest {
        base_dir: base.to_path_buf(),
        session: session.into(),
        clone: clone.to_path_buf(),
        checkpoint: id.into(),
        limits: Limits::default(),
    })
}

/// The agent's worst: history reset and collected, files changed, deleted and replaced by
/// symlinks out of the clone, HEAD detached elsewhere, the index emptied.
fn wreck(clone: &Path, outside: &Path) {
    let three = git(clone, &["rev-parse", "HEAD"]);
    git(clone, &["reset", "-q", "--hard", "HEAD~2"]);
    git(clone, &["reflog", "expire", "--expire=now", "--all"]);
    git(clone, &["gc", "-q", "--prune=now"]);
    assert!(
        !git_output(clone, &["cat-file", "-e", &three])
            .status
            .success(),
        "the checkpoint's HEAD is gone from the clone"
    );
    write(clone, "a.txt", "wrecked\n");
    write(clone, "other.txt", "the agent's new file\n");
    std::fs::remove_file(clone.join("b.txt")).unwrap();
    std::fs::remove_file(clone.join("new.txt")).ok();
    std::os::unix::fs::symlink("/etc/passwd", clone.join("new.txt")).unwrap();
    std::fs::remove_dir_all(clone.join("dir")).ok();
    std::os::unix::fs::symlink(outside, clone.join("dir")).unwrap();
    std::fs::remove_file(clone.join("run.sh")).ok();
    std::os::unix::fs::symlink(outside.join("run.sh"), clone.join("run.sh")).unwrap();
    git(clone, &["checkout", "-q", "--detach", "main"]);
}

#[test]
fn restore_gives_back_head_branch_index_and_work_tree_without_following_symlinks() {
    let scratch = Scratch::new("cp-restore");
    let (base, clone, outside) = (
        scratch.path("base"),
        scratch.path("clone"),
        scratch.path("outside"),
    );
    busy_clone(&clone);
    std::fs::create_dir_all(&outside).unwrap();
    write(&outside, "run.sh", "outside, never written\n");
    let before = cli_state(&clone, &scratch);
    let record = take(&base, "s1", &clone, "before the wreck");
    assert_eq!(
        (record.head.as_str(), record.branch.as_deref()),
        (before.head.as_str(), Some("refs/heads/feature"))
    );
    assert_eq!(record.index_tree, before.index_tree);
    assert_eq!(record.worktree_tree, before.worktree_tree);
    assert_eq!(
        cli_state(&clone, &scratch),
        before,
        "taking wrote nothing in the clone"
    );

    let passwd = std::fs::read("/etc/passwd").unwrap();
    for junk_index in [false, true] {
        wreck(&clone, &outside);
        if junk_index {
            // An index libgit2 cannot read, and locks a killed git left (or a hostile one).
            write(&clone, ".git/index", "not an index");
            let passwd = Path::new("/etc/passwd");
            std::os::unix::fs::symlink(passwd, clone.join(".git/index.lock")).unwrap();
            std::os::unix::fs::symlink(passwd, clone.join(".git/HEAD.lock")).unwrap();
            write(&clone, ".git/refs/heads/feature.lock", "stale\n");
        }
        let restored = restore(&base, "s1", &clone, &record.id).unwrap();
        assert!(restored.files_written > 0 && restored.files_removed > 0);

        assert_eq!(cli_state(&clone, &scratch), before);
        assert_eq!(git(&clone, &["rev-parse", "feature"]), before.head);
        assert_eq!(std::fs::read("/etc/passwd").unwrap(), passwd);
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
        assert_eq!(
            std::fs::read(outside.join("run.sh")).unwrap(),
            b"outside, never written\n"
        );
        for name in ["new.txt", "dir", "run.sh"] {
            let meta = std::fs::symlink_metadata(clone.join(name)).unwrap();
            assert!(
                !meta.file_type().is_symlink(),
                "{name} is the clone's own again"
            );
        }
        assert_eq!(
            std::fs::read(clone.join("debug.log")).unwrap(),
            b"ignored\n"
        );
        git(&clone, &["fsck", "--no-dangling"]);
    }
}

#[test]
fn a_reflog_symlinked_out_of_the_clone_refuses_the_restore() {
    let scratch = Scratch::new("cp-reflog");
    let (base, clone) = (scratch.path("base"), scratch.path("clone"));
    busy_clone(&clone);
    let record = take(&base, "s1", &clone, "x");
    let target = scratch.path("host-file");
    write(&scratch.0, "host-file", "host\n");
    let logs = clone.join(".git/logs/refs/heads/feature");
    std::fs::remove_file(&logs).unwrap();
    std::os::unix::fs::symlink(&target, &logs).unwrap();
    let err = restore(&base, "s1", &clone, &record.id).unwrap_err();
    assert!(err.message.contains("refused"), "{err:?}");
    assert_eq!(std::fs::read(&target).unwrap(), b"host\n");
}

fn fork(base: &Path, id: &str, new_clone: &Path) -> std::path::PathBuf {
    fork_checkpoint(ForkRequest {
        base_dir: base.to_path_buf(),
        session: "s1".into(),
        checkpoint: id.into(),
        new_clone: new_clone.to_path_buf(),
        new_branch: "refs/heads/session-s2".into(),
        limits: Limits::default(),
    })
    .unwrap()
}

#[test]
fn a_fork_has_the_checkpoint_and_diverges_from_its_parent() {
    let scratch = Scratch::new("cp-fork");
    let (base, clone) = (scratch.path("base"), scratch.path("clone"));
    busy_clone(&clone);
    let before = cli_state(&clone, &scratch);
    let record = take(&base, "s1", &clone, "fork point");
    let forked = fork(&base, &record.id, &scratch.path("sessions/session-s2"));

    let state = cli_state(&forked, &scratch);
    assert_eq!(state.head, before.head);
    assert_eq!(state.branch.as_deref(), Some("refs/heads/session-s2"));
    assert_eq!(
        (state.index_tree.as_str(), state.worktree_tree.as_str()),
        (before.index_tree.as_str(), before.worktree_tree.as_str())
    );
    assert_eq!(state.status, before.status.replace("\n!! debug.log", ""));
    for pack in std::fs::read_dir(forked.join(".git/objects/pack")).unwrap() {
        assert_eq!(
            pack.unwrap().metadata().unwrap().nlink(),
            1,
            "no shared object file"
        );
    }

    write(&forked, "a.txt", "the fork's\n");
    git(&forked, &["commit", "-q", "-am", "fork's own"]);
    write(&clone, "b.txt", "the parent's\n");
    assert_eq!(
        std::fs::read(clone.join("a.txt")).unwrap(),
        b"a4 unstaged over staged\n"
    );
    assert_eq!(
        std::fs::read(forked.join("b.txt")).unwrap(),
        b"b2 unstaged\n"
    );
    assert_eq!(git(&clone, &["rev-parse", "HEAD"]), before.head);
    let fork_head = git(&forked, &["rev-parse", "HEAD"]);
    assert!(!git_output(&clone, &["cat-file", "-e", &fork_head])
        .status
        .success());
}

#[test]
fn a_fork_of_the_current_state_leaves_no_checkpoint_behind() {
    let scratch = Scratch::new("cp-fork-now");
    let (base, clone) = (scratch.path("base"), scratch.path("clone"));
    busy_clone(&clone);
    let before = cli_state(&clone, &scratch);
    let take = TakeRequest {
        base_dir: base.clone(),
        session: "s1".into(),
        clone: clone.clone(),
        label: None,
        limits: Limits::default(),
    };
    let target = scratch.path("sessions/session-s3");
    let forked = fork_current(take, target.clone(), "refs/heads/session-s3".into()).unwrap();
    assert_eq!(add_all_tree(&forked, &scratch), before.worktree_tree);
    let store = crate::checkpoint::CheckpointStore::open(&base, "s1").unwrap();
    assert!(store.list().unwrap().is_empty());
    let again = fork_current(
        TakeRequest {
            base_dir: base,
            session: "s1".into(),
            clone,
            label: None,
            limits: Limits::default(),
        },
        target,
        "refs/heads/session-s3".into(),
    );
    assert_eq!(again.unwrap_err().code, crate::error::ErrorCode::Eexist);
}

#[test]
fn restore_puts_back_a_git_directory_the_agent_replaced_or_removed() {
    let scratch = Scratch::new("cp-git-gone");
    let (base, clone) = (scratch.path("base"), scratch.path("clone"));
    busy_clone(&clone);
    let before = cli_state(&clone, &scratch);
    let record = take(&base, "s1", &clone, "before .git went");
    let host_dir = scratch.path("host-dir");
    std::fs::create_dir_all(&host_dir).unwrap();
    let git_dir = clone.join(".git");
    let damage: [(&str, &dyn Fn()); 4] = [
        ("removed", &|| {}),
        ("a gitfile", &|| write(&clone, ".git", "gitdir: /etc\n")),
        ("a symlink to a host folder", &|| {
            std::os::unix::fs::symlink(&host_dir, &git_dir).unwrap()
        }),
        ("a dangling symlink", &|| {
            std::os::unix::fs::symlink("/nowhere/at/all", &git_dir).unwrap()
        }),
    ];
    for (what, replace) in damage {
        std::fs::remove_dir_all(&git_dir).unwrap();
        replace();
        write(&clone, "a.txt", "the agent's\n");
        let restored = restore(&base, "s1", &clone, &record.id);
        assert!(restored.is_ok(), ".git {what}: {restored:?}");
        assert!(
            std::fs::symlink_metadata(&git_dir).unwrap().is_dir(),
            "{what}"
        );
        assert_eq!(cli_state(&clone, &scratch), before, ".git {what}");
        assert_eq!(git(&clone, &["rev-parse", "feature"]), before.head);
        assert_eq!(std::fs::read_dir(&host_dir).unwrap().count(), 0, "{what}");
        git(&clone, &["fsck", "--no-dangling"]);
    }
}
