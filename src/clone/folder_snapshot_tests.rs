//! Tests of plain-folder snapshots (`folder_snapshot.rs`, `folder_tree.rs`): what is
//! taken, what is left out, the bounds, and a folder left exactly as it was.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::time::Duration;

use super::*;
use crate::error::ErrorCode;
use crate::scratch_dir::Scratch;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every entry below `root` (and `root` itself): kind, mode, size, mtime in ns, and the
/// bytes of a file or the target of a link.
fn manifest(root: &Path) -> BTreeMap<PathBuf, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let meta = std::fs::symlink_metadata(dir).unwrap();
        let key = |m: &std::fs::Metadata, extra: String| {
            format!(
                "{:o} {} {}.{} {extra}",
                m.mode(),
                m.size(),
                m.mtime(),
                m.mtime_nsec()
            )
        };
        out.insert(
            dir.strip_prefix(root).unwrap().to_path_buf(),
            key(&meta, String::new()),
        );
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let m = std::fs::symlink_metadata(&path).unwrap();
            let rel = path.strip_prefix(root).unwrap().to_path_buf();
            if m.is_dir() {
                walk(root, &path, out);
            } else if m.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, key(&m, target.display().to_string()));
            } else if m.is_file() {
                let bytes = std::fs::read(&path).unwrap();
                out.insert(rel, key(&m, format!("{bytes:?}")));
            } else {
                out.insert(rel, key(&m, "special".into()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The snapshot's tree as `path -> mode` (blobs only), and a blob's bytes by path.
fn tree_of(repo_dir: &Path, commit: Oid) -> (BTreeMap<String, i32>, Repository) {
    let repo = Repository::open(repo_dir).unwrap();
    let tree = repo.find_commit(commit).unwrap().tree().unwrap();
    let mut out = BTreeMap::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() == Some(git2::ObjectType::Blob) {
            out.insert(format!("{dir}{}", entry.name().unwrap()), entry.filemode());
        }
        git2::TreeWalkResult::Ok
    })
    .unwrap();
    drop(tree);
    (out, repo)
}

fn blob_text(repo: &Repository, commit: Oid, path: &str) -> Vec<u8> {
    let tree = repo.find_commit(commit).unwrap().tree().unwrap();
    let entry = tree.get_path(Path::new(path)).unwrap();
    repo.find_blob(entry.id()).unwrap().content().to_vec()
}

fn snapshot(base: &Path, folder: &Path) -> Result<(PathBuf, Oid)> {
    snapshot_folder(base, "s1", folder, SnapshotLimits::default())
}

#[test]
fn files_with_their_bytes_and_executable_bit_symlinks_as_links_and_the_folder_unchanged() {
    let folder = Scratch::new("snap-folder");
    let outside = Scratch::new("snap-outside");
    let base = Scratch::new("snap-base");
    let f = &folder.0;
    write(f, "src/main.rs", "fn main() {}\n");
    write(f, "run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(f.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(&outside.0, "secret.txt", "outside\n");
    std::os::unix::fs::symlink("src/main.rs", f.join("inside")).unwrap();
    std::os::unix::fs::symlink(&outside.0, f.join("out")).unwrap();
    std::os::unix::fs::symlink("nowhere", f.join("dangling")).unwrap();
    std::fs::create_dir_all(f.join("empty")).unwrap();
    std::fs::create_dir_all(f.join(".git").join("objects")).unwrap();
    write(f, ".git/HEAD", "ref: refs/heads/main\n");
    let before = manifest(f);

    let (path, commit) = snapshot(&base.0, f).unwrap();
    assert_eq!(path, base.0.join("repositories").join("session-s1"));
    let (tree, repo) = tree_of(&path, commit);
    let expected: BTreeMap<String, i32> = [
        ("dangling", 0o120000),
        ("inside", 0o120000),
        ("out", 0o120000),
        ("run.sh", 0o100755),
        ("src/main.rs", 0o100644),
    ]
    .into_iter()
    .map(|(p, m)| (p.to_string(), m))
    .collect();
    assert_eq!(tree, expected);
    assert_eq!(
        blob_text(&repo, commit, "out"),
        outside.0.as_os_str().as_bytes()
    );
    assert_eq!(blob_text(&repo, commit, "inside"), b"src/main.rs");
    assert_eq!(blob_text(&repo, commit, "run.sh"), b"#!/bin/sh\n");
    let message = repo
        .find_commit(commit)
        .unwrap()
        .message()
        .unwrap()
        .to_string();
    assert!(message.starts_with("Snapshot of "), "{message}");
    // Checked out in the library's repository, at a detached HEAD.
    assert!(repo.head_detached().unwrap());
    assert_eq!(
        std::fs::read_to_string(path.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(std::fs::symlink_metadata(path.join("out"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(repo
        .config()
        .unwrap()
        .get_string("core.excludesFile")
        .is_err());

    assert_eq!(manifest(f), before);
    // Again: the snapshot already there.
    assert_eq!(snapshot(&base.0, f).unwrap(), (path, commit));
    assert_eq!(manifest(f), before);
}

#[test]
fn the_folders_gitignore_files_and_the_default_rules_are_honoured_and_never_written() {
    let folder = Scratch::new("snap-ignore");
    let base = Scratch::new("snap-base");
    let f = &folder.0;
    write(f, ".gitignore", "*.tmp\n!keep.tmp\nbuild/\n!.env\n");
    write(f, "a.tmp", "x");
    write(f, "keep.tmp", "x");
    write(f, "build/out.o", "x");
    write(f, "src/build", "a file named build\n");
    write(f, ".env", "KEY=1\n");
    write(f, ".env.local", "KEY=2\n");
    write(f, "debug.log", "x");
    write(f, "node_modules/dep/index.js", "x");
    write(
        f,
        "sub/.gitignore",
        "local.txt\n/anchored.txt\n!debug.log\n",
    );
    write(f, "sub/local.txt", "x");
    write(f, "sub/deeper/local.txt", "x");
    write(f, "sub/anchored.txt", "x");
    write(f, "sub/deeper/anchored.txt", "x");
    write(f, "sub/debug.log", "x");
    write(f, "local.txt", "x");
    write(f, "we*rd/.gitignore", "x\n");
    write(f, "we*rd/x", "x");
    write(f, "weird/x", "x");
    let before = manifest(f);

    let (path, commit) = snapshot(&base.0, f).unwrap();
    let (tree, _repo) = tree_of(&path, commit);
    let paths: Vec<&str> = tree.keys().map(String::as_str).collect();
    assert_eq!(
        paths,
        [
            ".env",
            ".gitignore",
            "keep.tmp",
            "local.txt",
            "src/build",
            "sub/.gitignore",
            "sub/debug.log",
            "sub/deeper/anchored.txt",
            "we*rd/.gitignore",
            "weird/x",
        ]
    );
    assert_eq!(manifest(f), before);
    assert!(!f.join(".git").exists());
}

/// Linux only: the watch is inotify. macOS has no `O_PATH` to look before opening, so there
/// a FIFO is opened `O_NONBLOCK` (never waited on) and then skipped (`folder_entries`).
#[test]
#[cfg(target_os = "linux")]
fn a_fifo_is_skipped_and_never_opened() {
    let folder = Scratch::new("snap-fifo");
    let base = Scratch::new("snap-base");
    let f = &folder.0;
    write(f, "file.txt", "x\n");
    let fifo = std::ffi::CString::new(f.join("pipe").as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    // SAFETY: plain calls; the descriptor is closed below.
    let watch = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    assert!(watch >= 0);
    let file = std::ffi::CString::new(f.join("file.txt").as_os_str().as_bytes()).unwrap();
    let mask = libc::IN_OPEN | libc::IN_ACCESS;
    // SAFETY: an inotify descriptor and NUL-terminated paths.
    let fifo_wd = unsafe { libc::inotify_add_watch(watch, fifo.as_ptr(), mask) };
    // SAFETY: as above.
    let file_wd = unsafe { libc::inotify_add_watch(watch, file.as_ptr(), mask) };
    assert!(fifo_wd >= 0 && file_wd >= 0);

    let (path, commit) = snapshot(&base.0, f).unwrap();
    let (tree, _repo) = tree_of(&path, commit);
    assert_eq!(tree.keys().collect::<Vec<_>>(), ["file.txt"]);

    let mut buf = [0u8; 4096];
    // SAFETY: a buffer of its length.
    let n = unsafe { libc::read(watch, buf.as_mut_ptr().cast(), buf.len()) };
    let mut opened = Vec::new();
    let mut at = 0usize;
    while n > 0 && at < n as usize {
        // SAFETY: the kernel wrote whole events into the buffer.
        let event: libc::inotify_event =
            unsafe { std::ptr::read_unaligned(buf[at..].as_ptr().cast()) };
        opened.push(event.wd);
        at += std::mem::size_of::<libc::inotify_event>() + event.len as usize;
    }
    // SAFETY: closed once.
    unsafe { libc::close(watch) };
    // The regular file was opened (the watch sees opens), the FIFO never.
    assert!(opened.contains(&file_wd), "{opened:?}");
    assert!(!opened.contains(&fifo_wd), "{opened:?}");
}

#[test]
fn past_a_bound_nothing_is_left_behind() {
    let folder = Scratch::new("snap-bounds");
    let base = Scratch::new("snap-base");
    let f = &folder.0;
    for i in 0..5 {
        write(f, &format!("d/f{i}"), "0123456789");
    }
    let repositories = base.0.join("repositories");
    let tight = |limits: SnapshotLimits| snapshot_folder(&base.0, "s1", f, limits).unwrap_err();

    let many = tight(SnapshotLimits {
        max_entries: 4,
        ..Default::default()
    });
    assert_eq!(many.code, ErrorCode::LimitExceeded, "{}", many.message);
    let large = tight(SnapshotLimits {
        max_bytes: 45,
        ..Default::default()
    });
    assert_eq!(large.code, ErrorCode::LimitExceeded, "{}", large.message);
    let deep = tight(SnapshotLimits {
        max_depth: 0,
        ..Default::default()
    });
    assert_eq!(deep.code, ErrorCode::LimitExceeded, "{}", deep.message);
    write(f, ".gitignore", &"x\n".repeat(100));
    let rules = tight(SnapshotLimits {
        max_gitignore_bytes: 100,
        ..Default::default()
    });
    assert_eq!(rules.code, ErrorCode::LimitExceeded, "{}", rules.message);
    let slow = tight(SnapshotLimits {
        timeout: Duration::ZERO,
        ..Default::default()
    });
    assert_eq!(slow.code, ErrorCode::Timeout, "{}", slow.message);

    // A build that ran past its deadline is abandoned, not stopped: it removes its folder
    // when it ends, on its own thread (under load, after the call has answered).
    let left = || std::fs::read_dir(&repositories).unwrap().count();
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while left() > 0 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(left(), 0);
    let (_, commit) = snapshot(&base.0, f).unwrap();
    assert!(!commit.is_zero());
}

#[test]
fn an_empty_folder_is_one_commit_of_the_empty_tree() {
    let folder = Scratch::new("snap-empty");
    let base = Scratch::new("snap-base");
    let (path, commit) = snapshot(&base.0, &folder.0).unwrap();
    let (tree, repo) = tree_of(&path, commit);
    assert!(tree.is_empty());
    assert_eq!(repo.find_commit(commit).unwrap().parent_count(), 0);
}
