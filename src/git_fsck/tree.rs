//! A tree's entries as git's `fsck_tree` checks them (as `--strict`, warnings included):
//! each `<mode> <name>\0<20-byte id>` well formed, with one of the five modes git writes
//! (no zero padding), a name `entry_name` accepts, a non-null id, sorted in git's order
//! (a directory's name compares as if it ended in `/`), no name twice; a `.gitmodules` or
//! `.gitattributes` must be a file. The entries are returned for the caller's walk.

use std::cmp::Ordering;
use std::collections::HashSet;

use git2::Oid;

pub use super::entry_name::SpecialFile;
use super::entry_name::{check_name, special_file};
use super::finding::Finding;

/// What a tree entry holds, by its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// `100644` or `100755`.
    File,
    /// `120000`: a blob holding the link's target.
    Symlink,
    /// `40000`.
    Tree,
    /// `160000`: a submodule's commit, not an object of this repository.
    Gitlink,
}

/// One entry, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub id: Oid,
    pub kind: EntryKind,
    /// A regular file git parses (fsck checks its contents): `.gitmodules`, `.gitattributes`.
    pub special: Option<SpecialFile>,
}

fn kind_of(mode: &[u8], name: &str) -> Result<EntryKind, Finding> {
    match mode {
        b"100644" | b"100755" => Ok(EntryKind::File),
        b"120000" => Ok(EntryKind::Symlink),
        b"40000" => Ok(EntryKind::Tree),
        b"160000" => Ok(EntryKind::Gitlink),
        m if m.is_empty() || !m.iter().all(|d| (b'0'..=b'7').contains(d)) => {
            Err(Finding::new("badTree", "cannot be parsed as a tree"))
        }
        m if m[0] == b'0' => Err(Finding::new(
            "zeroPaddedFilemode",
            format!("entry {name}: contains zero-padded file modes"),
        )),
        m => Err(Finding::new(
            "badFilemode",
            format!(
                "entry {name}: mode {} is not one git writes",
                String::from_utf8_lossy(m)
            ),
        )),
    }
}

/// git's tree order: names compared bytewise, a directory's as if followed by `/`.
fn tree_order(a: &[u8], a_dir: bool, b: &[u8], b_dir: bool) -> Ordering {
    let common = a.len().min(b.len());
    a[..common].cmp(&b[..common]).then_with(|| {
        let end = |name: &[u8], dir: bool| {
            name.get(common)
                .copied()
                .unwrap_or(if dir { b'/' } else { 0 })
        };
        end(a, a_dir).cmp(&end(b, b_dir))
    })
}

/// One raw entry's parts, and what follows it.
struct RawEntry<'a> {
    mode: &'a [u8],
    name: &'a [u8],
    id: &'a [u8],
    rest: &'a [u8],
}

fn split_entry(data: &[u8]) -> Result<RawEntry<'_>, Finding> {
    let unparsable = || Finding::new("badTree", "cannot be parsed as a tree");
    let space = data
        .iter()
        .position(|&b| b == b' ')
        .ok_or_else(unparsable)?;
    let after_mode = &data[space + 1..];
    let nul = after_mode
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(unparsable)?;
    let after_name = &after_mode[nul + 1..];
    if after_name.len() < 20 {
        return Err(unparsable());
    }
    Ok(RawEntry {
        mode: &data[..space],
        name: &after_mode[..nul],
        id: &after_name[..20],
        rest: &after_name[20..],
    })
}

/// Checks a tree's bytes; its entries, in order.
pub fn check_tree(data: &[u8]) -> Result<Vec<TreeEntry>, Finding> {
    let mut entries = Vec::new();
    let mut names: HashSet<&[u8]> = HashSet::new();
    let mut previous: Option<(&[u8], bool)> = None;
    let mut rest = data;
    while !rest.is_empty() {
        let RawEntry {
            mode,
            name,
            id: raw_id,
            rest: after,
        } = split_entry(rest)?;
        rest = after;
        let shown = format!("{:?}", String::from_utf8_lossy(name));
        let kind = kind_of(mode, &shown)?;
        check_name(name, kind == EntryKind::Symlink)?;
        if raw_id.iter().all(|&b| b == 0) {
            return Err(Finding::new(
                "nullSha1",
                format!("entry {shown}: a null id"),
            ));
        }
        let is_dir = kind == EntryKind::Tree;
        if !names.insert(name) {
            return Err(Finding::new(
                "duplicateEntries",
                format!("entry {shown}: contains duplicate file entries"),
            ));
        }
        if let Some((before, before_dir)) = previous {
            if tree_order(before, before_dir, name, is_dir) != Ordering::Less {
                return Err(Finding::new(
                    "treeNotSorted",
                    format!("entry {shown}: not properly sorted"),
                ));
            }
        }
        previous = Some((name, is_dir));
        let special = special_file(name).filter(|_| kind != EntryKind::Symlink);
        if let (Some(file), EntryKind::Tree | EntryKind::Gitlink) = (special, kind) {
            let id = match file {
                SpecialFile::Gitmodules => "gitmodulesBlob",
                SpecialFile::Gitattributes => "gitattributesBlob",
            };
            return Err(Finding::new(
                id,
                format!("entry {shown}: a non-blob where git reads a file"),
            ));
        }
        let id = Oid::from_bytes(raw_id)
            .map_err(|_| Finding::new("badTree", "cannot be parsed as a tree"))?;
        entries.push(TreeEntry { id, kind, special });
    }
    Ok(entries)
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
