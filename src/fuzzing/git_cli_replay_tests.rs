//! The `git_objects` corpus, and seeded mutations of it, against git itself: every tree and
//! commit ours accepts is written to a repository, and `git fsck --strict` finds nothing
//! wrong with any of them (the objects they link to are missing: "broken links" aside).

use std::process::Command;

use git2::{ObjectType, Repository};

use super::git_objects::split;
use super::mutate::mutate;
use super::replay_tests::corpus;
use super::Rng;
use crate::git_fsck::{check_commit, check_tree};
use crate::scratch_dir::Scratch;

const MUTATIONS: usize = 20_000;

#[test]
fn what_ours_accepts_git_fsck_strict_accepts() {
    let corpus = corpus("git_objects");
    let mut rng = Rng::new(0x9175);
    let mutations = (0..MUTATIONS).map(|_| mutate(&mut rng, &corpus));
    let scratch = Scratch::new("fuzz-fsck");
    let repo = Repository::init(&scratch.0).unwrap();
    let odb = repo.odb().unwrap();
    let mut written = 0;
    for data in corpus.iter().cloned().chain(mutations) {
        let Some((tree, object)) = split(&data) else {
            continue;
        };
        if tree && check_tree(object).is_ok() {
            odb.write(ObjectType::Tree, object).unwrap();
        } else if !tree && check_commit(object).is_ok() {
            odb.write(ObjectType::Commit, object).unwrap();
        } else {
            continue;
        }
        written += 1;
    }
    let out = Command::new("git")
        .args([
            "-c",
            "safe.directory=*",
            "fsck",
            "--strict",
            "--no-dangling",
        ])
        .current_dir(&scratch.0)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", &scratch.0)
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stderr);
    let refused: Vec<&str> = report
        .lines()
        .filter(|l| l.contains(" in tree ") || l.contains(" in commit "))
        .filter(|l| !l.ends_with(": broken links"))
        .collect();
    assert!(written > corpus.len() / 2, "{written} objects accepted");
    assert_eq!(
        refused,
        Vec::<&str>::new(),
        "of {written} objects ours accepts"
    );
}
