//! A commit's headers as git's `fsck_commit` checks them: no NUL before the message, the
//! header ended by a blank line (or the object by a newline), `tree` first, then `parent`
//! lines, exactly one `author`, then `committer`, each identity well formed, the ids full
//! hex. What it links to is returned for the caller's walk, which checks the types.

use git2::Oid;

use super::finding::Finding;
use super::ident::check_ident;

/// What a commit links to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitLinks {
    pub tree: Oid,
    pub parents: Vec<Oid>,
}

/// git's `verify_headers`: the header part holds no NUL and is terminated.
fn check_header_end(data: &[u8]) -> Result<(), Finding> {
    for (at, &b) in data.iter().enumerate() {
        match b {
            0 => {
                return Err(Finding::new(
                    "nulInHeader",
                    format!("unterminated header: NUL at offset {at}"),
                ))
            }
            b'\n' if data.get(at + 1) == Some(&b'\n') => return Ok(()),
            _ => {}
        }
    }
    if data.last() == Some(&b'\n') {
        return Ok(());
    }
    Err(Finding::new("unterminatedHeader", "unterminated header"))
}

/// The id after `name ` at the start of `rest`, ended by a newline; `rest` moves past it.
fn id_line(rest: &mut &[u8], name: &[u8]) -> Option<Result<Oid, ()>> {
    let value = rest.strip_prefix(name)?.strip_prefix(b" ")?;
    let parsed = match value.get(40) {
        Some(b'\n') if value[..40].iter().all(u8::is_ascii_hexdigit) => {
            let hex = std::str::from_utf8(&value[..40]).expect("hex digits are ASCII");
            Oid::from_str(hex).map_err(|_| ())
        }
        _ => Err(()),
    };
    if parsed.is_ok() {
        *rest = &value[41..];
    }
    Some(parsed)
}

/// The line after `name ` at the start of `rest` (without its newline); `rest` moves past it.
fn value_line<'a>(rest: &mut &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let value = rest.strip_prefix(name)?.strip_prefix(b" ")?;
    let end = value
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(value.len());
    *rest = value.get(end + 1..).unwrap_or_default();
    Some(&value[..end])
}

/// Checks a commit's bytes; its tree and parents.
pub fn check_commit(data: &[u8]) -> Result<CommitLinks, Finding> {
    check_header_end(data)?;
    let mut rest = data;
    let tree = match id_line(&mut rest, b"tree") {
        None => {
            return Err(Finding::new(
                "missingTree",
                "invalid format - expected 'tree' line",
            ))
        }
        Some(Err(())) => {
            return Err(Finding::new(
                "badTreeSha1",
                "invalid 'tree' line format - bad sha1",
            ))
        }
        Some(Ok(id)) => id,
    };
    let mut parents = Vec::new();
    while let Some(parent) = id_line(&mut rest, b"parent") {
        let id = parent.map_err(|()| {
            Finding::new("badParentSha1", "invalid 'parent' line format - bad sha1")
        })?;
        parents.push(id);
    }
    let mut authors = 0;
    while let Some(author) = value_line(&mut rest, b"author") {
        authors += 1;
        check_ident(author)?;
    }
    match authors {
        0 => {
            return Err(Finding::new(
                "missingAuthor",
                "invalid format - expected 'author' line",
            ))
        }
        1 => {}
        _ => {
            return Err(Finding::new(
                "multipleAuthors",
                "invalid format - multiple 'author' lines",
            ))
        }
    }
    let committer = value_line(&mut rest, b"committer").ok_or_else(|| {
        Finding::new(
            "missingCommitter",
            "invalid format - expected 'committer' line",
        )
    })?;
    check_ident(committer)?;
    if data.contains(&0) {
        return Err(Finding::new(
            "nulInCommit",
            "NUL byte in the commit object body",
        ));
    }
    Ok(CommitLinks { tree, parents })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
    const WHO: &str = "A <a@b> 1700000000 +0000";

    fn id(text: &str) -> Option<&'static str> {
        check_commit(text.as_bytes()).err().map(|f| f.id)
    }

    #[test]
    fn a_well_formed_commit_gives_its_links() {
        let parent = "1".repeat(40);
        let text = format!("tree {TREE}\nparent {parent}\nauthor {WHO}\ncommitter {WHO}\ngpgsig x\n\nmsg\nparent {parent}\n");
        let links = check_commit(text.as_bytes()).unwrap();
        assert_eq!(links.tree.to_string(), TREE);
        assert_eq!(
            links.parents.len(),
            1,
            "a 'parent' line in the message is no header"
        );
        assert_eq!(
            id(&format!("tree {TREE}\nauthor {WHO}\ncommitter {WHO}\n")),
            None
        );
    }

    #[test]
    fn malformed_headers_are_refused_with_gits_ids() {
        let p = "2".repeat(40);
        assert_eq!(
            id(&format!("author {WHO}\ntree {TREE}\n\n")),
            Some("missingTree")
        );
        assert_eq!(
            id(&format!(
                "tree {}\nauthor {WHO}\ncommitter {WHO}\n\n",
                &TREE[..39]
            )),
            Some("badTreeSha1")
        );
        assert_eq!(
            id(&format!("tree {TREE}x\nauthor {WHO}\ncommitter {WHO}\n\n")),
            Some("badTreeSha1")
        );
        assert_eq!(
            id(&format!(
                "tree {TREE}\nparent {p} \nauthor {WHO}\ncommitter {WHO}\n\n"
            )),
            Some("badParentSha1")
        );
        assert_eq!(
            id(&format!("tree {TREE}\ncommitter {WHO}\n\n")),
            Some("missingAuthor")
        );
        assert_eq!(
            id(&format!(
                "tree {TREE}\nauthor {WHO}\nauthor {WHO}\ncommitter {WHO}\n\n"
            )),
            Some("multipleAuthors")
        );
        assert_eq!(
            id(&format!("tree {TREE}\nauthor {WHO}\n\n")),
            Some("missingCommitter")
        );
        assert_eq!(
            id(&format!(
                "tree {TREE}\nauthor A <a> 01 +0000\ncommitter {WHO}\n\n"
            )),
            Some("zeroPaddedDate")
        );
        assert_eq!(
            id(&format!("tree {TREE}\nauthor {WHO}\ncommitter {WHO}")),
            Some("unterminatedHeader")
        );
        assert_eq!(
            id(&format!("tree {TREE}\nauthor {WHO}\0\ncommitter {WHO}\n\n")),
            Some("nulInHeader")
        );
        assert_eq!(
            id(&format!(
                "tree {TREE}\nauthor {WHO}\ncommitter {WHO}\n\nm\0sg\n"
            )),
            Some("nulInCommit")
        );
    }
}
