//! The checks against the real `git fsck --strict`: one tree per case, in a repository of
//! its own, and the verdicts (and git's message id) compared.

use std::path::Path;
use std::process::Command;

use git2::{ObjectType, Oid, Repository};

use super::*;
use crate::scratch_dir::Scratch;

/// What git's fsck says of a repository: `None` when content, else its whole report.
fn git_fsck(dir: &Path) -> Option<String> {
    let out = Command::new("git")
        .args([
            "-c",
            "safe.directory=*",
            "fsck",
            "--strict",
            "--no-dangling",
        ])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stderr).into_owned();
    (!out.status.success()).then_some(report)
}

/// Ours, as the delivery walk applies it: the tree, then each blob it names as a parsed file.
fn ours(repo: &Repository, tree: &[u8]) -> Result<(), Finding> {
    for entry in check_tree(tree)? {
        if let (Some(file), EntryKind::File) = (entry.special, entry.kind) {
            let blob = repo.find_blob(entry.id).unwrap();
            check_special_blob(file, blob.content())?;
        }
    }
    Ok(())
}

/// A repository whose one commit has a tree of one entry, `mode` and `name`, naming a blob
/// of `content`, an empty tree or a commit as the mode says; ours and git's verdicts.
fn verdicts(mode: &str, name: &[u8], content: &[u8]) -> (Result<(), Finding>, Option<String>) {
    let scratch = Scratch::new("fsck-cli");
    let repo = Repository::init(&scratch.0).unwrap();
    let odb = repo.odb().unwrap();
    let blob = odb.write(ObjectType::Blob, content).unwrap();
    let empty_tree = odb.write(ObjectType::Tree, b"").unwrap();
    let commit = |tree: Oid| {
        let who = "A <a@b> 1700000000 +0000";
        let text = format!("tree {tree}\nauthor {who}\ncommitter {who}\n\nm\n");
        odb.write(ObjectType::Commit, text.as_bytes()).unwrap()
    };
    let target = match mode {
        "40000" => empty_tree,
        "160000" => commit(empty_tree),
        _ => blob,
    };
    let mut tree = format!("{mode} ").into_bytes();
    tree.extend_from_slice(name);
    tree.push(0);
    tree.extend_from_slice(target.as_bytes());
    let tree_id = odb.write(ObjectType::Tree, &tree).unwrap();
    let head = commit(tree_id);
    repo.reference("refs/heads/main", head, true, "case")
        .unwrap();
    repo.set_head("refs/heads/main").unwrap();
    (ours(&repo, &tree), git_fsck(&scratch.0))
}

/// Each case's verdict is git's; a refusal names the message id git prints.
fn agree(cases: &[(&str, &[u8], &[u8])]) -> Vec<(String, String)> {
    let mut disagreements = Vec::new();
    for (mode, name, content) in cases {
        let case = format!("{mode} {:?}", String::from_utf8_lossy(name));
        match verdicts(mode, name, content) {
            (Ok(()), None) => {}
            (Err(f), Some(report)) if report.contains(&format!("{}:", f.id)) => {}
            (ours, git) => disagreements.push((case, format!("ours {ours:?}, git {git:?}"))),
        }
    }
    disagreements
}

const SUBMODULE_UP: &[u8] = b"[submodule \"../x\"]\n\tpath = x\n\turl = ./x\n";

#[test]
fn names_that_are_not_utf8_near_the_dot_names_get_git_fscks_verdict() {
    let cases: &[(&str, &[u8], &[u8])] = &[
        ("40000", b".git\xff", b""),
        ("40000", b".GIT\xff\xff", b""),
        ("100644", b".git\xe2\x80", b""),
        ("40000", b".git\xef\xbf\xbe", b""),
        ("40000", b".git\xef\xbf\xbf", b""),
        ("40000", b".git\xc0\x80", b""),
        ("40000", b".git\xed\xa0\x80", b""),
        ("40000", b".git\xf4\x90\x80\x80", b""),
        ("40000", b"\xe2\x80\x8c.git\xe2\x80\x8d\xff", b""),
        ("120000", b".gitmodules\xff", b"x"),
        ("120000", b".gitmodules\xef\xbf\xbf", b"x"),
        ("40000", b".gitmodules\xff", b""),
        ("160000", b".gitmodules\xff", b""),
        ("100644", b".gitmodules\xff", SUBMODULE_UP),
        ("40000", b".gitattributes\xff", b""),
        ("160000", b".GitAttributes\xff", b""),
    ];
    assert_eq!(agree(cases), []);
}

#[test]
fn their_neighbours_git_accepts_are_accepted() {
    let cases: &[(&str, &[u8], &[u8])] = &[
        ("40000", b".gitx", b""),
        ("40000", b"x\xff", b""),
        ("40000", b"\xff.git", b""),
        ("40000", b".gi\xfft", b""),
        ("40000", b".git\xef\xbf\xbd", b""),
        ("40000", b".git\xc3\xa9", b""),
        ("40000", b".git\xe2\x80\x8cx", b""),
        (
            "100644",
            b".gitmodules\xff",
            b"[submodule \"x\"]\n\tpath = x\n\turl = ./x\n",
        ),
        ("100644", b"gitmod~1\xff", SUBMODULE_UP),
        ("100644", b".gitignore\xff", b"x"),
        ("120000", b".gitignore\xff", b"x"),
        ("120000", b".mailmap\xff", b"x"),
        ("160000", b".mailmap\xff", b""),
        ("120000", b".gitattributes\xff", b"x"),
    ];
    assert_eq!(agree(cases), []);
}

#[test]
fn the_dot_names_themselves_get_git_fscks_verdict() {
    let cases: &[(&str, &[u8], &[u8])] = &[
        ("40000", b".git", b""),
        ("40000", ".g\u{200c}it".as_bytes(), b""),
        ("40000", b"GIT~1", b""),
        ("120000", b".gitmodules", b"x"),
        ("100644", b".gitmodules", SUBMODULE_UP),
        ("40000", b".gitattributes", b""),
        ("100644", b".gitattributes", b"*.bin binary\n"),
        ("120000", b".gitignore", b"x"),
        ("120000", b".mailmap", b"x"),
    ];
    assert_eq!(agree(cases), []);
}
