//! Where a session starts: a caller's `ref` (a branch, tag or commit of the project),
//! checked as a user value and resolved with libgit2's `revparse_single`, never a shell.

use git2::{Oid, Repository};

use crate::error::{Error, ErrorCode, Result};

/// Refuses what is not a plain revision: empty, over 255 bytes, starting with `-`, control
/// characters or spaces, and the revision syntax that searches or reads more than a name
/// (`:/text`, `rev:path`, `@{…}` reflogs and upstreams, `..` ranges, `\`).
pub fn validate_ref(text: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::invalid_argument(format!("ref {text:?}: {why}")));
    if text.is_empty() || text.len() > 255 {
        return bad("must be 1 to 255 bytes");
    }
    if text.starts_with('-') {
        return bad("must not start with '-'");
    }
    if text.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return bad("must not hold spaces or control characters");
    }
    for (needle, name) in [(":", "':'"), ("@{", "'@{'"), ("..", "'..'"), ("\\", "'\\'")] {
        if text.contains(needle) {
            return bad(&format!("must not hold {name}"));
        }
    }
    Ok(())
}

/// The commit `text` names in `repo` (a tag is peeled to its commit); `GIT_REF_NOT_FOUND`
/// when it names none.
pub fn resolve_start(repo: &Repository, text: Option<&str>) -> Result<Oid> {
    let not_found = |what: &str, why: &str| {
        Error::new(
            ErrorCode::GitRefNotFound,
            format!("ref {what:?} does not name a commit of the project: {why}"),
        )
    };
    match text {
        None => repo
            .head()
            .and_then(|h| h.peel_to_commit())
            .map(|c| c.id())
            .map_err(|e| not_found("HEAD", e.message())),
        Some(text) => {
            validate_ref(text)?;
            let object = repo
                .revparse_single(text)
                .map_err(|e| not_found(text, e.message()))?;
            let commit = object
                .peel_to_commit()
                .map_err(|e| not_found(text, e.message()))?;
            Ok(commit.id())
        }
    }
}
