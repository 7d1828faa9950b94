//! Property test of the ignore rules against git itself: a small random tree with random
//! `.gitignore` files (patterns of `*`, `?`, `/`, `!`, `a`, `b` and `.`) is snapshotted by
//! `FolderTree`, and the files it takes are exactly those `git check-ignore --no-index`
//! does not report, the library's default rules being git's `core.excludesFile`.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use git2::Repository;
use proptest::prelude::*;

use super::DEFAULT_GITIGNORE;
use crate::clone::folder_tree::{FolderTree, SnapshotLimits};
use crate::delivery::Deadline;
use crate::scratch_dir::Scratch;

fn name() -> impl Strategy<Value = String> {
    "[ab.]{1,2}".prop_filter("not . or ..", |n| n != "." && n != "..")
}

fn file_paths() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(
        proptest::collection::vec(name(), 1..4).prop_map(|p| p.join("/")),
        1..10,
    )
}

/// `.gitignore` files: a file index whose directory holds it (or the root) and its lines.
fn ignore_files() -> impl Strategy<Value = Vec<(Option<prop::sample::Index>, Vec<String>)>> {
    proptest::collection::vec(
        (
            any::<Option<prop::sample::Index>>(),
            proptest::collection::vec("[*?/!ab.]{1,4}", 1..5),
        ),
        1..4,
    )
}

fn write(root: &Path, rel: &str, text: &str) -> bool {
    let path = root.join(rel);
    let made = path
        .parent()
        .is_some_and(|p| std::fs::create_dir_all(p).is_ok());
    made && !path.is_dir() && std::fs::write(&path, text).is_ok()
}

fn files_below(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        if rel == ".git" {
            continue;
        }
        if path.is_dir() {
            files_below(root, &path, out);
        } else {
            out.insert(rel);
        }
    }
}

fn taken_by_folder_tree(folder: &Path) -> BTreeSet<String> {
    let store = Scratch::new("ignore-props-store");
    let repo = Repository::init_bare(&store.0).unwrap();
    let deadline = Deadline::after(Duration::from_secs(60));
    let mut tree = FolderTree::new(&repo, SnapshotLimits::default(), deadline).unwrap();
    let oid = tree.write(folder).unwrap();
    let mut out = BTreeSet::new();
    repo.find_tree(oid)
        .unwrap()
        .walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(git2::ObjectType::Blob) {
                out.insert(format!("{dir}{}", entry.name().unwrap()));
            }
            git2::TreeWalkResult::Ok
        })
        .unwrap();
    out
}

fn git(folder: &Path) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(folder)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    command
}

fn ignored_by_git(folder: &Path, excludes: &Path, files: &BTreeSet<String>) -> BTreeSet<String> {
    let init = git(folder)
        .args(["init", "-q", "--template="])
        .status()
        .unwrap();
    assert!(init.success());
    let mut child = git(folder)
        .arg("-c")
        .arg(format!("core.excludesFile={}", excludes.display()))
        .args(["check-ignore", "--no-index", "--stdin", "-z"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = Vec::new();
    for file in files {
        input.extend_from_slice(file.as_bytes());
        input.push(0);
    }
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.code().is_some_and(|c| c <= 1), "{output:?}");
    output
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8(p.to_vec()).unwrap())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(64) })]

    // Alone: beside the rest of the lib tests, libgit2 crashed twice (SIGSEGV, a NULL vector
    // in vector.c's compute_new_size, on this test's thread) in a full `cargo test`; 13 runs
    // of it alone did not. `npm test` runs it by itself (`-- --ignored`) until that is
    // understood.
    #[test]
    #[ignore = "run alone: see the comment above"]
    fn the_files_taken_are_those_git_does_not_ignore(
        paths in file_paths(),
        ignores in ignore_files(),
    ) {
        let folder = Scratch::new("ignore-props");
        let others = Scratch::new("ignore-props-excludes");
        let excludes = others.path("excludes");
        std::fs::write(&excludes, DEFAULT_GITIGNORE).unwrap();
        let written: Vec<&String> = paths.iter().filter(|p| write(&folder.0, p, "x")).collect();
        let mut shown = Vec::new();
        for (at, lines) in &ignores {
            let dir = match at {
                Some(i) if !written.is_empty() => written[i.index(written.len())]
                    .rsplit_once('/')
                    .map_or("", |(d, _)| d),
                _ => "",
            };
            let rel = if dir.is_empty() { ".gitignore".to_string() } else { format!("{dir}/.gitignore") };
            let text = lines.join("\n") + "\n";
            if write(&folder.0, &rel, &text) {
                shown.push(format!("{rel}: {text:?}"));
            }
        }
        let mut files = BTreeSet::new();
        files_below(&folder.0, &folder.0, &mut files);
        let ours = taken_by_folder_tree(&folder.0);
        let ignored = ignored_by_git(&folder.0, &excludes, &files);
        let theirs: BTreeSet<String> = files.difference(&ignored).cloned().collect();
        prop_assert_eq!(ours, theirs, "files {:?}, rules {:?}", files, shown);
    }
}
