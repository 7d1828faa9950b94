//! Git objects checked as `git fsck --strict` checks them, for objects a session made:
//! a commit's headers and identities, a tree's entries (modes, order, duplicates, and every
//! spelling of `.git` that git refuses on any file system), and the contents of the blobs
//! git itself parses (`.gitmodules`, `.gitattributes`). Pure functions over an object's
//! bytes; which objects to check, and the type each reference implies, is the caller's walk.
//! Names are checked as git's `utf8.c` reads them for HFS+ (`dot_names`) and with
//! gitoxide's `gix-validate` for NTFS; the header, tree-order and `.gitmodules` rules are
//! git's `fsck.c`, ported.

mod commit;
mod config_text;
mod dot_names;
mod entry_name;
mod finding;
#[cfg(test)]
mod git_cli_tests;
mod gitattributes;
mod gitmodules;
mod ident;
mod submodule_url;
mod tree;

pub use commit::{check_commit, CommitLinks};
pub use finding::Finding;
pub use tree::{check_tree, EntryKind, SpecialFile, TreeEntry};

/// Checks the contents of a blob that a tree names as one of the files git parses.
pub fn check_special_blob(file: SpecialFile, data: &[u8]) -> Result<(), Finding> {
    match file {
        SpecialFile::Gitmodules => gitmodules::check(data),
        SpecialFile::Gitattributes => gitattributes::check(data),
    }
}
