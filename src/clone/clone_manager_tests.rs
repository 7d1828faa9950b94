//! Tests of session clones (`clone_manager.rs`).

use super::*;
use crate::scratch_dir::Scratch;

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

#[test]
fn a_start_ref_that_names_nothing_makes_nothing() {
    let project = Scratch::new("project");
    let base = Scratch::new("base");
    plain_project(&project.0);
    let manager = CloneManager::new(base.0.clone());
    // A plain directory is not initialised for a ref that cannot name anything in it.
    let err = manager
        .create_session_clone_at(&project.0, "r1", Some("main"))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::GitRefNotFound, "{err}");
    assert!(!project.0.join(".git").exists());
    let (path, head) = manager
        .create_session_clone_at(&project.0, "r2", None)
        .unwrap();
    for bad in ["nope", "HEAD~5"] {
        let err = manager
            .create_session_clone_at(&project.0, "r3", Some(bad))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::GitRefNotFound, "{bad}: {err}");
    }
    let err = manager
        .create_session_clone_at(&project.0, "r3", Some("--upload-pack=x"))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument, "{err}");
    assert_eq!(
        manager.list_session_clones().unwrap(),
        vec!["r2".to_string()]
    );
    let (again, same) = manager
        .create_session_clone_at(&project.0, "r4", Some(&head.to_string()))
        .unwrap();
    let clone = Repository::open(&again).unwrap();
    assert_eq!(clone.head().unwrap().target(), Some(same));
    assert_eq!((same, path.exists()), (head, true));
}
