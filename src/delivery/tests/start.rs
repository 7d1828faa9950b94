//! A session's start: a ref validated as a user value and resolved in the project.

use super::*;
use crate::delivery::{resolve_start, validate_ref};
use crate::error::ErrorCode;

#[test]
fn refs_that_are_not_plain_revisions_are_invalid_arguments() {
    for bad in [
        "",
        "-x",
        "--upload-pack=x",
        "a b",
        "main:README.md",
        ":/fix",
        "main@{1}",
        "@{u}",
        "a..b",
        "a\\b",
        "a\nb",
        &"x".repeat(256),
    ] {
        assert_eq!(
            validate_ref(bad).unwrap_err().code,
            ErrorCode::InvalidArgument,
            "{bad:?}"
        );
    }
    for good in [
        "main",
        "v1.0",
        "feature/x",
        "HEAD~1",
        "HEAD^",
        "abc123",
        "v1.0^{commit}",
    ] {
        validate_ref(good).unwrap();
    }
}

#[test]
fn a_branch_tag_or_commit_resolves_and_anything_else_is_not_found() {
    let scratch = Scratch::new("start");
    let dir = &scratch.0;
    let repo = init(dir);
    write(dir, "a.txt", "1\n");
    let first = commit_all(&repo, "first");
    let first_commit = repo.find_commit(first).unwrap();
    let sig = git2::Signature::now("T", "t@e").unwrap();
    repo.tag("v1", first_commit.as_object(), &sig, "annotated", false)
        .unwrap();
    repo.branch("old", &first_commit, false).unwrap();
    write(dir, "a.txt", "2\n");
    let second = commit_all(&repo, "second");
    assert_eq!(resolve_start(&repo, None).unwrap(), second);
    assert_eq!(resolve_start(&repo, Some("v1")).unwrap(), first);
    assert_eq!(resolve_start(&repo, Some("old")).unwrap(), first);
    assert_eq!(
        resolve_start(&repo, Some(&first.to_string())).unwrap(),
        first
    );
    assert_eq!(resolve_start(&repo, Some("HEAD~1")).unwrap(), first);
    for missing in ["nope", "v2", "0000000000000000000000000000000000000000"] {
        let err = resolve_start(&repo, Some(missing)).unwrap_err();
        assert_eq!(err.code, ErrorCode::GitRefNotFound, "{missing}: {err}");
    }
    let tree = repo.find_commit(first).unwrap().tree_id().to_string();
    assert_eq!(
        resolve_start(&repo, Some(&tree)).unwrap_err().code,
        ErrorCode::GitRefNotFound
    );
}
