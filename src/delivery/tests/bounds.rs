//! Past a bound a read rejects with a code; a blob over the bound is binary, unread.

use std::time::Duration;

use super::*;
use crate::error::ErrorCode;

fn repo_with_commits(dir: &Path, n: usize) -> Oid {
    let repo = init(dir);
    write(dir, "base.txt", "base\n");
    let base = commit_all(&repo, "base");
    for i in 0..n {
        write(dir, &format!("f{i}.txt"), format!("{i}\n"));
        commit_all(&repo, &format!("commit {i}"));
    }
    base
}

#[test]
fn commits_and_files_past_their_bound_reject_limit_exceeded() {
    let scratch = Scratch::new("bounds");
    let base = repo_with_commits(&scratch.0, 5);
    let ok = read_with(
        &scratch.0,
        base,
        Limits {
            max_commits: 5,
            max_files: 5,
            ..Limits::default()
        },
        false,
    );
    assert_eq!((ok.commits.len(), ok.files.len()), (5, 5));
    let err = read_err(
        &scratch.0,
        base,
        Limits {
            max_commits: 4,
            ..Limits::default()
        },
    );
    assert_eq!(err.code, ErrorCode::LimitExceeded, "{err}");
    let err = read_err(
        &scratch.0,
        base,
        Limits {
            max_files: 4,
            ..Limits::default()
        },
    );
    assert_eq!(err.code, ErrorCode::LimitExceeded, "{err}");
    for i in 0..5 {
        write(&scratch.0, &format!("u{i}.txt"), "u\n");
    }
    let err = read_err(
        &scratch.0,
        base,
        Limits {
            max_files: 4,
            max_commits: 10,
            ..Limits::default()
        },
    );
    assert_eq!(err.code, ErrorCode::LimitExceeded, "{err}");
}

#[test]
fn the_time_bound_rejects_timeout() {
    let scratch = Scratch::new("time");
    let base = repo_with_commits(&scratch.0, 2);
    let err = read_err(
        &scratch.0,
        base,
        Limits {
            timeout: Duration::ZERO,
            ..Limits::default()
        },
    );
    assert_eq!(err.code, ErrorCode::Timeout, "{err}");
}

#[test]
fn a_blob_over_the_bound_is_binary_and_never_loaded_even_forced_to_text() {
    let scratch = Scratch::new("blob");
    let dir = &scratch.0;
    let repo = init(dir);
    write(dir, "small.txt", "s\n");
    let base = commit_all(&repo, "base");
    let big: String = (0..2000).map(|i| format!("line {i}\n")).collect();
    write(dir, "big.txt", &big);
    // `diff` forces text, which makes libgit2 skip its own size check.
    write(dir, ".gitattributes", "* diff\n");
    commit_all(&repo, "big");
    let limits = Limits {
        max_blob_bytes: 1000,
        ..Limits::default()
    };
    let got = read_with(dir, base, limits, true);
    let file = got.files.iter().find(|f| f.path == "big.txt").unwrap();
    assert!(file.binary && file.additions == 0, "{file:?}");
    let patch = got.patch.unwrap();
    assert!(
        patch.contains("Binary files a/big.txt and b/big.txt differ"),
        "{patch}"
    );
    assert!(!patch.contains("line 1999"));
    let whole = read_with(dir, base, Limits::default(), false);
    let file = whole.files.iter().find(|f| f.path == "big.txt").unwrap();
    assert_eq!((file.binary, file.additions), (false, 2000));
}

#[test]
fn the_patch_is_cut_at_a_line_and_says_so() {
    let scratch = Scratch::new("cut");
    let base = repo_with_commits(&scratch.0, 20);
    let opts = ChangesOptions {
        patch: true,
        max_patch_bytes: 300,
    };
    let got = read_changes(&scratch.0, base, &opts, &Limits::default()).unwrap();
    let patch = got.patch.unwrap();
    assert!(
        got.patch_truncated && patch.len() <= 300 && patch.ends_with('\n'),
        "{patch}"
    );
    let opts = ChangesOptions {
        patch: true,
        max_patch_bytes: 1 << 20,
    };
    let got = read_changes(&scratch.0, base, &opts, &Limits::default()).unwrap();
    assert!(!got.patch_truncated && got.patch.unwrap().contains("f19.txt"));
}

#[test]
fn a_large_filtered_tracked_file_is_refused_before_it_is_read() {
    let scratch = Scratch::new("filtered");
    let dir = &scratch.0;
    let repo = init(dir);
    write(dir, ".gitattributes", "*.txt text\n");
    write(dir, "big.txt", "x".repeat(5000));
    let base = commit_all(&repo, "base");
    let limits = Limits {
        max_blob_bytes: 1000,
        ..Limits::default()
    };
    // Same size, another mtime: libgit2 would hash it through the crlf filter, whole.
    write(dir, "big.txt", "y".repeat(5000));
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(dir.join("big.txt"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let err = read_err(dir, base, limits);
    assert_eq!(err.code, ErrorCode::LimitExceeded, "{err}");
}

#[test]
fn a_read_stuck_on_a_fifo_in_the_work_tree_is_answered_with_timeout() {
    let scratch = Scratch::new("fifo");
    let base = repo_with_commits(&scratch.0, 1);
    std::fs::create_dir_all(scratch.0.join("sub")).unwrap();
    let fifo = std::ffi::CString::new(
        scratch
            .0
            .join("sub/.gitignore")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let limits = Limits {
        timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    let opts = ChangesOptions {
        patch: false,
        max_patch_bytes: 0,
    };
    let started = std::time::Instant::now();
    // libgit2 opens a nested .gitignore to read it, and blocks on a FIFO: the reader
    // thread is left behind, the caller answered.
    let err = crate::delivery::changes(scratch.0.clone(), base, opts, limits).unwrap_err();
    assert_eq!(err.code, ErrorCode::Timeout, "{err}");
    assert!(started.elapsed() < Duration::from_secs(3));
    // Unblocks a reader left behind, if any.
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(scratch.0.join("sub/.gitignore"));
}
