//! `changes` with `patch`: the uncommitted patch is what `git diff HEAD` prints after
//! `git add -A` in a copy of the clone, the clone is left as it was (not an object file
//! touched), and the work tree's hostile parts get the answers export's snapshot gives.

use std::os::unix::fs::symlink;
use std::os::unix::fs::MetadataExt;
use std::process::Command;

use super::export::{options, Session};
use super::*;
use crate::delivery::ExportOptions;
use crate::error::ErrorCode;

/// Every file under the clone's `.git/objects` set to one old mtime.
fn age_objects(clone: &Path) {
    let status = Command::new("find")
        .arg(clone.join(".git/objects"))
        .args([
            "-type",
            "f",
            "-exec",
            "touch",
            "-h",
            "-d",
            "@946684800",
            "{}",
            "+",
        ])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Every file under the clone's `.git/objects` with its mtime.
fn object_times(clone: &Path) -> Vec<(String, i64)> {
    let mut found = Vec::new();
    let mut dirs = vec![clone.join(".git/objects")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                dirs.push(entry.path());
            } else {
                found.push((entry.path().display().to_string(), meta.mtime()));
            }
        }
    }
    found.sort();
    found
}

/// `git diff HEAD` of the work tree at `clone`, added whole in a copy.
fn cli_patch(clone: &Path, scratch: &Path) -> String {
    let copy = scratch.join("copy");
    let cp = Command::new("cp").arg("-a").arg(clone).arg(&copy).status();
    assert!(cp.unwrap().success());
    git(&copy, &["add", "-A"]);
    git(&copy, &["diff", "--cached", "HEAD"])
}

fn base_of(s: &Session) -> Oid {
    Oid::from_str(git(&s.project, &["rev-parse", "HEAD"]).trim()).unwrap()
}

#[test]
fn the_uncommitted_patch_is_git_diff_head_after_add_all() {
    let s = Session::new("uncommitted-patch");
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "committed.txt", "committed\n");
    write(&s.clone, "keep/same.txt", "same\n");
    write(&s.clone, "moved.txt", "one\ntwo\nthree\nfour\nfive\n");
    commit_all(&clone, "agent");
    write(&s.clone, "staged.txt", "staged\n");
    git(&s.clone, &["add", "staged.txt"]);
    write(&s.clone, "a.txt", "a2\nunstaged\n");
    write(&s.clone, "untracked/deep.txt", "untracked\n");
    write(&s.clone, "bin.dat", [0u8, 1, 2, 0, 255]);
    std::fs::remove_file(s.clone.join("src/lib.rs")).unwrap();
    symlink("/etc/passwd", s.clone.join("passwd-link")).unwrap();
    git(&s.clone, &["mv", "moved.txt", "renamed.txt"]);
    // Staged, then put back: the tree written for `keep/` is one the clone has.
    write(&s.clone, "keep/same.txt", "changed\n");
    git(&s.clone, &["add", "keep/same.txt"]);
    write(&s.clone, "keep/same.txt", "same\n");
    write(&s.clone, ".gitignore", "ignored.txt\n");
    write(&s.clone, "ignored.txt", "not taken\n");
    age_objects(&s.clone);
    let before = (
        object_times(&s.clone),
        std::fs::read(s.clone.join(".git/index")).unwrap(),
        git(&s.clone, &["rev-parse", "HEAD"]),
    );

    let got = read(&s.clone, base_of(&s));

    let patch = got.uncommitted_patch.expect("an uncommitted patch");
    assert!(!got.uncommitted_patch_truncated);
    assert_eq!(patch, cli_patch(&s.clone, &s.root.0));
    assert!(
        patch.contains("+++ b/passwd-link\n@@ -0,0 +1 @@\n+/etc/passwd\n"),
        "{patch}"
    );
    assert!(
        !patch.contains("root:"),
        "the link's target was read: {patch}"
    );
    assert!(patch.contains("rename from moved.txt"), "{patch}");
    assert!(
        patch.contains("Binary files /dev/null and b/bin.dat differ"),
        "{patch}"
    );
    assert!(!patch.contains("ignored.txt\n+"), "{patch}");
    assert!(got.patch.unwrap().contains("+++ b/committed.txt"));
    let after = (
        object_times(&s.clone),
        std::fs::read(s.clone.join(".git/index")).unwrap(),
        git(&s.clone, &["rev-parse", "HEAD"]),
    );
    assert_eq!(before, after, "the clone changed");
}

#[test]
fn no_uncommitted_work_gives_an_empty_patch_and_without_patch_none() {
    let s = Session::new("clean-patch");
    let got = read(&s.clone, base_of(&s));
    assert_eq!(got.uncommitted_patch.as_deref(), Some(""));
    assert!(!got.uncommitted_patch_truncated);
    write(&s.clone, "new.txt", "new\n");
    let got = read_with(&s.clone, base_of(&s), Limits::default(), false);
    assert_eq!(got.uncommitted_patch, None);
    assert!(!got.uncommitted_patch_truncated);
}

#[test]
fn max_patch_bytes_bounds_both_texts_the_committed_one_first() {
    let s = Session::new("shared-bound");
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "committed.txt", "c\n".repeat(40));
    commit_all(&clone, "agent");
    write(&s.clone, "work.txt", "w\n".repeat(40));
    let read_max = |max| {
        let opts = ChangesOptions {
            patch: true,
            max_patch_bytes: max,
        };
        read_changes(&s.clone, base_of(&s), &opts, &Limits::default()).unwrap()
    };
    let whole = read_max(1 << 20);
    let (committed, work) = (whole.patch.unwrap(), whole.uncommitted_patch.unwrap());
    let both = read_max(committed.len() + work.len());
    assert_eq!(both.patch.as_deref(), Some(committed.as_str()));
    assert_eq!(both.uncommitted_patch.as_deref(), Some(work.as_str()));
    assert!(!both.patch_truncated && !both.uncommitted_patch_truncated);
    let short = read_max(committed.len() + 100);
    assert_eq!(short.patch.as_deref(), Some(committed.as_str()));
    let cut = short.uncommitted_patch.unwrap();
    assert!(short.uncommitted_patch_truncated);
    assert!(cut.len() <= 100 && cut.ends_with('\n') && work.starts_with(&cut));
    let none_left = read_max(committed.len() / 2);
    assert!(none_left.patch_truncated);
    assert_eq!(none_left.uncommitted_patch.as_deref(), Some(""));
    assert!(none_left.uncommitted_patch_truncated);
}

#[test]
fn files_over_the_blob_bound_are_binary_and_the_snapshots_refusals_are_the_same() {
    let s = Session::new("patch-bounds");
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, "huge.txt", "huge text\n".repeat(300));
    commit_all(&clone, "huge");
    // Moved as it is: paired by id, so the id hashed from the work tree is git's.
    git(&s.clone, &["mv", "huge.txt", "moved-huge.txt"]);
    write(&s.clone, "big.txt", "big text\n".repeat(300));
    write(&s.clone, "small.txt", "small\n");
    let fifo = std::ffi::CString::new(s.clone.join("pipe").into_os_string().into_encoded_bytes());
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.unwrap().as_ptr(), 0o644) }, 0);
    let limits = Limits {
        max_blob_bytes: 1024,
        ..Limits::default()
    };
    let got = read_with(&s.clone, base_of(&s), limits, true);
    let patch = got.uncommitted_patch.unwrap();
    assert!(
        patch.contains(
            "diff --git a/big.txt b/big.txt\nBinary files a/big.txt and b/big.txt differ\n"
        ),
        "{patch}"
    );
    assert!(
        patch.contains("diff --git a/huge.txt b/moved-huge.txt\nBinary files a/huge.txt and b/moved-huge.txt differ\n"),
        "{patch}"
    );
    assert!(patch.contains("+small\n"), "{patch}");
    assert!(!patch.contains("pipe"), "{patch}");

    // Over the object bound: refused by both, with the same code.
    let limits = Limits {
        max_object_bytes: 1024,
        ..Limits::default()
    };
    let exported = s.export_with(
        ExportOptions {
            uncommitted: true,
            ..options("big")
        },
        limits,
    );
    let patch_err = read_err(&s.clone, base_of(&s), limits);
    assert_eq!(exported.unwrap_err().code, ErrorCode::LimitExceeded);
    assert_eq!(patch_err.code, ErrorCode::LimitExceeded, "{patch_err}");
    // Without `patch` nothing is read, so nothing is refused.
    read_with(&s.clone, base_of(&s), limits, false);
}

/// What export's snapshot and the uncommitted patch make of the same work tree: both
/// refuse it with one code, or neither finds anything to take, or both take it.
fn same_answer(s: &Session) -> String {
    let exported = s.export(ExportOptions {
        uncommitted: true,
        ..options("refused")
    });
    let opts = ChangesOptions {
        patch: true,
        max_patch_bytes: 1 << 20,
    };
    let patched = read_changes(&s.clone, base_of(s), &opts, &Limits::default());
    match (exported, patched) {
        (Err(e), Err(p)) => {
            assert_eq!(e.code, p.code, "{e} / {p}");
            p.message
        }
        (Ok(e), Ok(p)) => {
            let text = p.uncommitted_patch.unwrap();
            assert_eq!(e.snapshot.is_none(), text.is_empty(), "{e:?} / {text}");
            text
        }
        (e, p) => panic!("export {e:?}, changes {p:?}"),
    }
}

#[test]
fn a_work_tree_name_or_dot_file_git_refuses_gets_the_answer_export_gives() {
    // (path, contents, what the answer holds: "" for nothing taken)
    let cases: [(&str, &str, &str); 5] = [
        ("sub/.GIT/config", "[core]\n", ""),
        ("sub/.git", "gitdir: /etc\n", ""),
        ("GIT~1/config", "[core]\n", "invalid name"),
        (".git /config", "[core]\n", "invalid name"),
        (
            ".gitmodules",
            "[submodule \"x\"]\n\tpath = x\n\turl = -oProxyCommand=x\n",
            "gitmodules",
        ),
    ];
    for (n, (path, text, why)) in cases.into_iter().enumerate() {
        let s = Session::new(&format!("patch-refused-{n}"));
        write(&s.clone, path, text);
        let answer = same_answer(&s);
        assert!(answer.contains(why), "{path}: {answer}");
    }
}

#[test]
fn a_file_over_the_load_bound_is_hashed_as_git_hashes_it_not_held() {
    use crate::delivery::worktree_entry::{open_root, read_entry, ReadBounds, WorktreeEntry};
    let scratch = Scratch::new("hashed-entry");
    let content = "0123456789abcdef".repeat(10_000);
    write(&scratch.0, "f.txt", &content);
    let root = open_root(&scratch.0).unwrap();
    let read = |load| read_entry(&root, "f.txt", ReadBounds { max: 1 << 20, load }).unwrap();
    let id = Oid::hash_object(git2::ObjectType::Blob, content.as_bytes()).unwrap();
    assert_eq!(
        read(1024),
        WorktreeEntry::Hashed {
            id,
            size: content.len() as u64,
            executable: false
        }
    );
    assert!(matches!(read(1 << 20), WorktreeEntry::File { .. }));
}
