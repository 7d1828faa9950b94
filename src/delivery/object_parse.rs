//! The links inside raw git objects a hostile clone hands over: a commit's tree and
//! parents, a tree's entries, a tag's target. Parsed strictly from the bytes (ids in full
//! hex or binary, known modes only), and tree entry names checked as git's fsck checks
//! them, so that no path the clone made can name `.git`, `..` or a path separator when the
//! branch is later checked out.

use git2::{ObjectType, Oid};

/// What a tree entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Blob,
    Tree,
    /// A submodule's commit: not an object of this repository.
    Gitlink,
}

fn hex_id(text: &[u8]) -> Result<Oid, String> {
    let text = std::str::from_utf8(text).map_err(|_| "an id is not text".to_string())?;
    if text.len() != 40 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("{text:?} is not an object id"));
    }
    Oid::from_str(text).map_err(|e| e.message().to_string())
}

/// The headers of a commit or tag: the lines before the first empty one.
fn headers(data: &[u8]) -> impl Iterator<Item = (&[u8], &[u8])> {
    data.split(|&b| b == b'\n')
        .take_while(|line| !line.is_empty())
        .filter(|line| line.first() != Some(&b' '))
        .map(|line| match line.iter().position(|&b| b == b' ') {
            Some(at) => (&line[..at], &line[at + 1..]),
            None => (line, &[][..]),
        })
}

/// A commit's tree and parents; its first header must be its tree.
pub fn commit_links(data: &[u8]) -> Result<(Oid, Vec<Oid>), String> {
    let mut lines = headers(data);
    let tree = match lines.next() {
        Some((b"tree", id)) => hex_id(id)?,
        _ => return Err("a commit that does not start with its tree".into()),
    };
    let mut parents = Vec::new();
    for (name, value) in lines {
        if name == b"parent" {
            parents.push(hex_id(value)?);
        }
    }
    Ok((tree, parents))
}

/// An annotated tag's target and its kind.
pub fn tag_target(data: &[u8]) -> Result<(Oid, ObjectType), String> {
    let mut lines = headers(data);
    let id = match lines.next() {
        Some((b"object", id)) => hex_id(id)?,
        _ => return Err("a tag that does not start with its object".into()),
    };
    let kind = match lines.next() {
        Some((b"type", b"commit")) => ObjectType::Commit,
        Some((b"type", b"tree")) => ObjectType::Tree,
        Some((b"type", b"blob")) => ObjectType::Blob,
        Some((b"type", b"tag")) => ObjectType::Tag,
        _ => return Err("a tag without a known type".into()),
    };
    Ok((id, kind))
}

fn entry_kind(mode: &[u8]) -> Result<EntryKind, String> {
    match mode {
        b"100644" | b"100755" | b"100664" | b"120000" => Ok(EntryKind::Blob),
        b"40000" => Ok(EntryKind::Tree),
        b"160000" => Ok(EntryKind::Gitlink),
        other => Err(format!(
            "a tree entry with mode {:?}",
            String::from_utf8_lossy(other)
        )),
    }
}

/// `.git` in any case, with the trailing dots and spaces Windows drops, or its 8.3 name.
fn names_git_dir(name: &[u8]) -> bool {
    let trimmed = name
        .iter()
        .rposition(|&b| b != b'.' && b != b' ')
        .map_or(&name[..0], |end| &name[..=end]);
    trimmed.eq_ignore_ascii_case(b".git") || name.eq_ignore_ascii_case(b"git~1")
}

/// An entry name a checkout could be led astray by.
pub fn bad_entry_name(name: &[u8]) -> Option<&'static str> {
    if name.is_empty() {
        Some("an empty name")
    } else if name == b"." || name == b".." {
        Some("a '.' or '..' name")
    } else if name.iter().any(|&b| b == b'/' || b == b'\\' || b == 0) {
        Some("a name with a path separator")
    } else if names_git_dir(name) {
        Some("an entry named .git")
    } else {
        None
    }
}

/// A tree's entries: (id, kind), each name checked.
pub fn tree_entries(data: &[u8]) -> Result<Vec<(Oid, EntryKind)>, String> {
    let mut entries = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let space = rest
            .iter()
            .position(|&b| b == b' ')
            .ok_or("a truncated tree entry")?;
        let kind = entry_kind(&rest[..space])?;
        rest = &rest[space + 1..];
        let nul = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or("a truncated tree entry")?;
        if let Some(why) = bad_entry_name(&rest[..nul]) {
            return Err(format!(
                "{why} ({:?})",
                String::from_utf8_lossy(&rest[..nul])
            ));
        }
        rest = &rest[nul + 1..];
        if rest.len() < 20 {
            return Err("a truncated tree entry".into());
        }
        let id = Oid::from_bytes(&rest[..20]).map_err(|e| e.message().to_string())?;
        entries.push((id, kind));
        rest = &rest[20..];
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_bytes(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (mode, name) in entries {
            out.extend_from_slice(mode.as_bytes());
            out.push(b' ');
            out.extend_from_slice(name);
            out.push(0);
            out.extend_from_slice(&[7u8; 20]);
        }
        out
    }

    #[test]
    fn commit_links_read_tree_and_parents() {
        let text = format!(
            "tree {}\nparent {}\nparent {}\nauthor a <a> 1 +0000\n\nparent {}\n",
            "1".repeat(40),
            "2".repeat(40),
            "3".repeat(40),
            "4".repeat(40)
        );
        let (tree, parents) = commit_links(text.as_bytes()).unwrap();
        assert_eq!(tree.to_string(), "1".repeat(40));
        assert_eq!(parents.len(), 2, "the message's 'parent' line is no header");
        assert!(commit_links(b"author x\ntree 11\n").is_err());
    }

    #[test]
    fn tree_entries_refuse_names_that_escape_a_checkout() {
        let ok = tree_bytes(&[("100644", b"a.txt"), ("40000", b"src"), ("160000", b"sub")]);
        let kinds: Vec<_> = tree_entries(&ok)
            .unwrap()
            .into_iter()
            .map(|e| e.1)
            .collect();
        assert_eq!(
            kinds,
            [EntryKind::Blob, EntryKind::Tree, EntryKind::Gitlink]
        );
        for name in [
            &b".git"[..],
            b".GIT",
            b".git. ",
            b"git~1",
            b"..",
            b".",
            b"a/b",
            b"",
        ] {
            let bad = tree_bytes(&[("100644", name)]);
            assert!(
                tree_entries(&bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(name)
            );
        }
        assert!(tree_entries(&tree_bytes(&[("100000", b"x")])).is_err());
        assert!(tree_entries(&ok[..ok.len() - 3]).is_err());
        assert!(tree_entries(&tree_bytes(&[("100644", b".gitignore")])).is_ok());
    }

    #[test]
    fn tag_target_reads_object_and_type() {
        let text = format!("object {}\ntype commit\ntag v1\n\nmsg\n", "a".repeat(40));
        assert_eq!(tag_target(text.as_bytes()).unwrap().1, ObjectType::Commit);
        assert!(tag_target(b"type commit\n").is_err());
    }
}
