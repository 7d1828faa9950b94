//! `read_changes` says what `git log`, `git diff --name-status`/`--numstat` and
//! `git status --porcelain` say of the same repository.

use std::collections::BTreeSet;

use super::*;
use crate::delivery::{BaseKind, FileStatus};

fn lines(n: usize, tag: &str) -> String {
    (0..n).map(|i| format!("{tag} line {i}\n")).collect()
}

/// A base with five files, two commits on top (change, delete, rename, binary, new), and
/// uncommitted work (unstaged, staged, untracked file and directory, ignored file).
fn worked(dir: &Path) -> (Repository, Oid) {
    let repo = init(dir);
    write(dir, "a.txt", lines(20, "a"));
    write(dir, "b.txt", lines(5, "b"));
    write(dir, "c.txt", lines(30, "c"));
    write(dir, "keep.txt", "keep\n");
    write(dir, ".gitignore", "*.log\n");
    let base = commit_all(&repo, "base");
    let mut a = lines(20, "a").replace("a line 3\n", "changed 3\n");
    a.push_str("added 1\nadded 2\n");
    write(dir, "a.txt", &a);
    std::fs::remove_file(dir.join("b.txt")).unwrap();
    commit_all(&repo, "change a, delete b");
    std::fs::rename(dir.join("c.txt"), dir.join("d.txt")).unwrap();
    write(dir, "bin.dat", [0u8, 1, 2, 0, 255, 0, 7]);
    write(dir, "sub/new.txt", "new\n");
    commit_all(&repo, "rename c, binary, new\n\nbody");
    write(dir, "keep.txt", "keep\nunstaged\n");
    write(dir, "staged.txt", "staged\n");
    let mut index = repo.index().unwrap();
    index.add_path(Path::new("staged.txt")).unwrap();
    index.write().unwrap();
    write(dir, "untracked.txt", "u\n");
    write(dir, "udir/x.txt", "x\n");
    write(dir, "debug.log", "ignored\n");
    (repo, base)
}

fn letter(status: FileStatus) -> &'static str {
    match status {
        FileStatus::Added => "A",
        FileStatus::Modified => "M",
        FileStatus::Deleted => "D",
        FileStatus::Renamed => "R",
        FileStatus::Copied => "C",
        FileStatus::Typechange => "T",
    }
}

#[test]
fn commits_files_and_work_tree_match_the_git_cli() {
    let scratch = Scratch::new("cli");
    let dir = &scratch.0;
    let (repo, base) = worked(dir);
    let got = read(dir, base);
    let range = format!("{base}..HEAD");
    let head = repo.head().unwrap().target().unwrap().to_string();
    assert_eq!(
        (got.base_kind, got.base.clone(), got.head.clone()),
        (BaseKind::Recorded, base.to_string(), head)
    );

    let ids: Vec<String> = git(dir, &["log", "--format=%H", &range])
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(
        got.commits.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
        ids
    );
    let log = git(dir, &["log", "--format=%s|%an|%ae|%at", &range]);
    let ours: Vec<String> = got
        .commits
        .iter()
        .map(|c| {
            format!(
                "{}|{}|{}|{}",
                c.summary,
                c.author_name,
                c.author_email,
                c.time_ms / 1000
            )
        })
        .collect();
    assert_eq!(ours, log.lines().collect::<Vec<_>>());

    let name_status: BTreeSet<String> = git(
        dir,
        &["diff", "--name-status", "-M", &base.to_string(), "HEAD"],
    )
    .lines()
    .map(|l| {
        l.split('\t')
            .enumerate()
            .map(|(i, f)| if i == 0 { &f[..1] } else { f })
            .collect::<Vec<_>>()
            .join("\t")
    })
    .collect();
    let ours: BTreeSet<String> = got
        .files
        .iter()
        .map(|f| match &f.old_path {
            Some(old) => format!("{}\t{old}\t{}", letter(f.status), f.path),
            None => format!("{}\t{}", letter(f.status), f.path),
        })
        .collect();
    assert_eq!(ours, name_status);

    // `-z`: "added\tdeleted\tpath\0", or "added\tdeleted\t\0old\0new\0" for a rename.
    let numstat = git(
        dir,
        &["diff", "--numstat", "-z", "-M", &base.to_string(), "HEAD"],
    );
    let mut fields = numstat.split('\0');
    let mut theirs = BTreeSet::new();
    while let Some(head) = fields.next().filter(|f| !f.is_empty()) {
        let parts: Vec<&str> = head.splitn(3, '\t').collect();
        let path = if parts[2].is_empty() {
            fields.next();
            fields.next().unwrap()
        } else {
            parts[2]
        };
        theirs.insert(format!("{}\t{}\t{path}", parts[0], parts[1]));
    }
    let ours: BTreeSet<String> = got
        .files
        .iter()
        .map(|f| match f.binary {
            true => format!("-\t-\t{}", f.path),
            false => format!("{}\t{}\t{}", f.additions, f.deletions, f.path),
        })
        .collect();
    assert_eq!(ours, theirs);

    let status: BTreeSet<String> = git(dir, &["status", "--porcelain"])
        .lines()
        .map(String::from)
        .collect();
    let ours: BTreeSet<String> = got
        .uncommitted
        .iter()
        .map(|u| format!("{} {}", u.status, u.path))
        .collect();
    assert_eq!(ours, status);
    assert!(got.uncommitted.iter().all(|u| u.path != "debug.log"));

    let patch = got.patch.unwrap();
    assert!(!got.patch_truncated);
    assert!(
        patch.contains("+added 1\n") && patch.contains("-a line 3\n"),
        "{patch}"
    );
    assert!(patch.contains("rename from c.txt"), "{patch}");
}

#[test]
fn a_rewritten_history_is_counted_from_the_merge_base() {
    let scratch = Scratch::new("rewritten");
    let dir = &scratch.0;
    let repo = init(dir);
    write(dir, "a.txt", "1\n");
    let first = commit_all(&repo, "first");
    write(dir, "a.txt", "2\n");
    let base = commit_all(&repo, "the session's base");
    // The agent resets to the first commit and commits something else.
    let first_commit = repo.find_commit(first).unwrap();
    repo.reset(first_commit.as_object(), git2::ResetType::Hard, None)
        .unwrap();
    write(dir, "b.txt", "b\n");
    let rewritten = commit_all(&repo, "rewritten");
    let got = read(dir, base);
    assert_eq!(got.base_kind, BaseKind::MergeBase);
    assert_eq!(
        got.base,
        git(dir, &["merge-base", &base.to_string(), "HEAD"]).trim()
    );
    assert_eq!(got.recorded_base, base.to_string());
    assert_eq!(
        got.commits.iter().map(|c| c.id.clone()).collect::<Vec<_>>(),
        vec![rewritten.to_string()]
    );
    assert_eq!(
        got.files
            .iter()
            .map(|f| f.path.as_str())
            .collect::<Vec<_>>(),
        vec!["b.txt"]
    );
}

#[test]
fn an_unrelated_history_is_compared_with_the_base_tree() {
    let scratch = Scratch::new("unrelated");
    let dir = &scratch.0;
    let repo = init(dir);
    write(dir, "a.txt", "1\n");
    let base = commit_all(&repo, "base");
    repo.set_head("refs/heads/orphan").unwrap();
    write(dir, "b.txt", "b\n");
    commit_all(&repo, "orphan");
    let got = read(dir, base);
    assert_eq!(got.base_kind, BaseKind::Unrelated);
    assert_eq!(got.commits.len(), 1);
    let files: BTreeSet<_> = got
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status))
        .collect();
    assert!(files.contains(&("b.txt", FileStatus::Added)), "{files:?}");
}
