//! A branch name given by the caller for `export` or `push`, checked before it names
//! anything: git's ref-name rules (libgit2's), no leading '-', not `HEAD`, at most 200
//! bytes.

use crate::error::{Error, Result};

/// `refs/heads/<branch>`, or `INVALID_ARGUMENT`.
pub fn branch_ref(branch: &str) -> Result<String> {
    let bad = |why: &str| Err(Error::invalid_argument(format!("branch {branch:?}: {why}")));
    if branch.is_empty() || branch.len() > 200 {
        return bad("must be 1 to 200 bytes");
    }
    if branch.starts_with('-') {
        return bad("must not start with '-'");
    }
    if branch == "HEAD" || branch.starts_with("refs/") {
        return bad("must be a branch's short name");
    }
    let full = format!("refs/heads/{branch}");
    if !git2::Reference::is_valid_name(&full) {
        return bad("is not a valid git branch name");
    }
    Ok(full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_follow_gits_rules() {
        assert_eq!(branch_ref("session/a-1").unwrap(), "refs/heads/session/a-1");
        for bad in [
            "",
            "-x",
            "HEAD",
            "a..b",
            "a b",
            "a~1",
            "a:b",
            "a/",
            "a.lock",
            "x\n",
            "refs/heads/x",
        ] {
            assert!(branch_ref(bad).is_err(), "{bad:?}");
        }
    }
}
