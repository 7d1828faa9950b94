//! Objects a hostile agent writes by hand, refused by `export` and `push` as git's fsck
//! refuses them, the project left as it was; what is accepted passes `git fsck --strict`
//! and `git gc` in the project.

use super::export::{object_counts, options, project_state, refused_without_a_trace, Session};
use super::*;
use crate::delivery::ExportOptions;
use crate::error::ErrorCode;
use git2::ObjectType;

fn raw_tree(entries: &[(&str, &[u8], Oid)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (mode, name, id) in entries {
        out.extend_from_slice(mode.as_bytes());
        out.push(b' ');
        out.extend_from_slice(name);
        out.push(0);
        out.extend_from_slice(id.as_bytes());
    }
    out
}

fn object(repo: &Repository, kind: ObjectType, bytes: &[u8]) -> Oid {
    repo.odb().unwrap().write(kind, bytes).unwrap()
}

const WHO: &str = "Agent <agent@example.com> 1700000000 +0000";

/// The clone's branch moved to a commit written as `tree`, `parents` and `author` say.
fn head_at(clone: &Repository, tree: Oid, parents: &[Oid], author: &str) -> Oid {
    let mut text = format!("tree {tree}\n");
    for p in parents {
        text.push_str(&format!("parent {p}\n"));
    }
    text.push_str(&format!("author {author}\ncommitter {WHO}\n\nraw\n"));
    let id = object(clone, ObjectType::Commit, text.as_bytes());
    let head = clone.head().unwrap().name().unwrap().to_string();
    clone.reference(&head, id, true, "raw").unwrap();
    id
}

fn head_of(repo: &Repository) -> Oid {
    repo.head().unwrap().peel_to_commit().unwrap().id()
}

fn id_in(dir: &Path, rev: &str) -> Oid {
    Oid::from_str(git(dir, &["rev-parse", rev]).trim()).unwrap()
}

/// A session whose HEAD is a commit of one tree with `entries` (plus the old HEAD as parent).
fn refused_tree(name: &str, entries: impl FnOnce(&Session, &Repository) -> Vec<u8>) -> String {
    let s = Session::new(name);
    let clone = Repository::open(&s.clone).unwrap();
    let raw = entries(&s, &clone);
    let tree = object(&clone, ObjectType::Tree, &raw);
    head_at(&clone, tree, &[head_of(&clone)], WHO);
    refused_without_a_trace(&s, Limits::default(), ErrorCode::Git).message
}

#[test]
fn a_reference_to_an_object_of_another_type_is_refused_even_when_the_project_has_it() {
    let why = refused_tree("dir-blob", |s, _| {
        raw_tree(&[("40000", b"dir", id_in(&s.project, "HEAD:a.txt"))])
    });
    assert!(
        why.contains("is a blob") && why.contains("as a tree"),
        "{why}"
    );
    let why = refused_tree("file-tree", |s, _| {
        raw_tree(&[("100644", b"file", id_in(&s.project, "HEAD:src"))])
    });
    assert!(
        why.contains("is a tree") && why.contains("as a blob"),
        "{why}"
    );
    let why = refused_tree("link-commit", |s, _| {
        raw_tree(&[("120000", b"link", id_in(&s.project, "HEAD"))])
    });
    assert!(why.contains("is a commit"), "{why}");

    let s = Session::new("commit-tree-blob");
    let clone = Repository::open(&s.clone).unwrap();
    head_at(
        &clone,
        id_in(&s.project, "HEAD:a.txt"),
        &[head_of(&clone)],
        WHO,
    );
    refused_without_a_trace(&s, Limits::default(), ErrorCode::Git);

    let s = Session::new("parent-tree");
    let clone = Repository::open(&s.clone).unwrap();
    let tree = id_in(&s.project, "HEAD^{tree}");
    head_at(
        &clone,
        tree,
        &[head_of(&clone), id_in(&s.project, "HEAD:src")],
        WHO,
    );
    refused_without_a_trace(&s, Limits::default(), ErrorCode::Git);
}

#[test]
fn an_object_named_twice_with_two_types_is_refused_on_the_second_path() {
    refused_tree("twice", |_, clone| {
        let blob = object(clone, ObjectType::Blob, b"new\n");
        raw_tree(&[("100644", b"a", blob), ("40000", b"b", blob)])
    });
    refused_tree("twice-deep", |_, clone| {
        let blob = object(clone, ObjectType::Blob, b"new\n");
        let inner = object(clone, ObjectType::Tree, &raw_tree(&[("40000", b"x", blob)]));
        raw_tree(&[("100644", b"a", blob), ("40000", b"sub", inner)])
    });
}

#[test]
fn trees_git_fsck_refuses_are_refused() {
    type Entries = Vec<(&'static str, &'static [u8])>;
    let cases: Vec<(&str, Entries, &str)> = vec![
        (
            "dup",
            vec![("100644", b"a"), ("100644", b"a")],
            "duplicateEntries",
        ),
        (
            "unsorted",
            vec![("100644", b"b"), ("100644", b"a")],
            "treeNotSorted",
        ),
        (
            "gitmodules-link",
            vec![("120000", b".gitmodules")],
            "gitmodulesSymlink",
        ),
        (
            "zwnj-end",
            vec![("40000", ".git\u{200c}".as_bytes())],
            "hasDotgit",
        ),
        (
            "zwnj-inside",
            vec![("40000", ".g\u{200c}it".as_bytes())],
            "hasDotgit",
        ),
        (
            "ntfs-stream",
            vec![("40000", b".git::$INDEX_ALLOCATION")],
            "hasDotgit",
        ),
        ("short-name", vec![("40000", b"GIT~1")], "hasDotgit"),
        ("not-utf8", vec![("40000", b".git\xff")], "hasDotgit"),
        (
            "not-utf8-link",
            vec![("120000", b".gitmodules\xef\xbf\xbf")],
            "gitmodulesSymlink",
        ),
        ("zero-pad", vec![("040000", b"d")], "zeroPaddedFilemode"),
        ("group-write", vec![("100664", b"f")], "badFilemode"),
    ];
    for (name, entries, id) in cases {
        let why = refused_tree(name, |_, clone| {
            let blob = object(clone, ObjectType::Blob, b"x\n");
            let tree = object(
                clone,
                ObjectType::Tree,
                &raw_tree(&[("100644", b"f", blob)]),
            );
            let with_ids: Vec<(&str, &[u8], Oid)> = entries
                .iter()
                .map(|(mode, n)| (*mode, *n, if mode.ends_with("40000") { tree } else { blob }))
                .collect();
            raw_tree(&with_ids)
        });
        assert!(why.contains(id), "{name}: {why}");
    }
}

#[test]
fn hostile_gitmodules_and_commit_headers_are_refused() {
    for (name, text, id) in [
        (
            "sm-name",
            "[submodule \"../../x\"]\n\tpath = x\n\turl = ./x\n",
            "gitmodulesName",
        ),
        (
            "sm-url",
            "[submodule \"x\"]\n\tpath = x\n\turl = -oProxyCommand=touch\n",
            "gitmodulesUrl",
        ),
        (
            "sm-update",
            "[submodule \"x\"]\n\tupdate = !sh\n",
            "gitmodulesUpdate",
        ),
    ] {
        let why = refused_tree(name, |_, clone| {
            let blob = object(clone, ObjectType::Blob, text.as_bytes());
            raw_tree(&[("100644", b".gitmodules", blob)])
        });
        assert!(why.contains(id), "{name}: {why}");
    }
    // The project's own blob, named .gitmodules by the session's tree.
    let why = refused_tree("sm-project-blob", |s, _| {
        let project = Repository::open(&s.project).unwrap();
        write(
            &s.project,
            "notes.txt",
            "[submodule \"../x\"]\n\tpath = x\n",
        );
        commit_all(&project, "notes");
        raw_tree(&[(
            "100644",
            b".gitmodules",
            id_in(&s.project, "HEAD:notes.txt"),
        )])
    });
    assert!(why.contains("gitmodulesName"), "{why}");
    for (name, author, id) in [
        ("no-email", "Agent 1700000000 +0000", "missingEmail"),
        ("padded", "Agent <a@b> 0170 +0000", "zeroPaddedDate"),
        ("zone", "Agent <a@b> 1 0100", "badTimezone"),
    ] {
        let s = Session::new(name);
        let clone = Repository::open(&s.clone).unwrap();
        let tree = id_in(&s.project, "HEAD^{tree}");
        head_at(&clone, tree, &[head_of(&clone)], author);
        let err = refused_without_a_trace(&s, Limits::default(), ErrorCode::Git);
        assert!(err.message.contains(id), "{name}: {err}");
    }
}

#[test]
fn a_snapshot_of_a_work_tree_with_such_names_is_refused() {
    for (name, path) in [
        ("snap-zwnj", ".git\u{200c}/config"),
        ("snap-ntfs", "git~1/hooks/post-checkout"),
        ("snap-modules", ".gitmodules"),
    ] {
        let s = Session::new(name);
        let content = match path {
            ".gitmodules" => "[submodule \"../../evil\"]\n\tpath = e\n\turl = ./e\n",
            _ => "[core]\n\thooksPath = /tmp\n",
        };
        write(&s.clone, path, content);
        let before = (project_state(&s.project, "-"), object_counts(&s.project));
        let err = s
            .export(ExportOptions {
                uncommitted: true,
                ..options("bad")
            })
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::Git, "{name}: {err}");
        assert_eq!(
            before,
            (project_state(&s.project, "-"), object_counts(&s.project)),
            "{name}"
        );
    }
}

#[test]
fn accepted_work_leaves_a_project_git_fsck_and_gc_are_content_with() {
    let s = Session::new("healthy");
    let clone = Repository::open(&s.clone).unwrap();
    write(&s.clone, ".gitattributes", "*.bin binary\n");
    write(&s.clone, "lib/deep/file.txt", "deep\n");
    commit_all(&clone, "work");
    let sub = id_in(&s.project, "HEAD~1");
    let gitmodules = object(
        &clone,
        ObjectType::Blob,
        b"[submodule \"vendor\"]\n\tpath = vendor\n\turl = ../vendor.git\n",
    );
    let head_tree = clone.head().unwrap().peel_to_tree().unwrap();
    let mut builder = clone.treebuilder(Some(&head_tree)).unwrap();
    builder.insert(".gitmodules", gitmodules, 0o100644).unwrap();
    builder.insert("vendor", sub, 0o160000).unwrap();
    let tree = builder.write().unwrap();
    head_at(&clone, tree, &[head_of(&clone)], WHO);
    write(&s.clone, "wip.txt", "uncommitted\n");
    let done = s
        .export(ExportOptions {
            uncommitted: true,
            ..options("session/healthy")
        })
        .unwrap();
    assert!(done.snapshot.is_some());
    git(&s.project, &["fsck", "--strict", "--no-dangling"]);
    git(&s.project, &["gc", "--quiet"]);
    git(&s.project, &["fsck", "--strict"]);
    assert_eq!(
        git(&s.project, &["show", "session/healthy:wip.txt"]),
        "uncommitted\n"
    );
}
