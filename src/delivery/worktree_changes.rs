//! The clone's uncommitted work, as `git status --porcelain` shows it: staged changes
//! (HEAD to index, renames found), unstaged ones (index to work tree) and untracked
//! files (an untracked directory as one `dir/` entry), ignored ones left out.
//!
//! libgit2 reads a tracked file whole only to hash it through a `crlf`/`ident` filter
//! when its size still matches the index; such a file over the blob bound is refused
//! before anything is read.

use std::collections::BTreeMap;
use std::path::Path;

use git2::{AttrCheckFlags, AttrValue, Delta, DiffOptions, Index, Repository, Tree};

use super::blob_sizes::BlobSizes;
use super::bounded_diff::{diff, Sides};
use super::file_changes::lossy;
use super::limits::{exceeded, Deadline, Limits};
use super::renames::detect_renames;
use crate::error::{Error, Result};

/// One uncommitted path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeChange {
    pub path: String,
    /// Its path in HEAD, for a staged rename.
    pub old_path: Option<String>,
    /// `git status --porcelain`'s two letters: index then work tree (`??` untracked).
    pub status: String,
}

fn letter(delta: Delta) -> char {
    match delta {
        Delta::Added => 'A',
        Delta::Deleted => 'D',
        Delta::Modified => 'M',
        Delta::Renamed => 'R',
        Delta::Copied => 'C',
        Delta::Typechange => 'T',
        Delta::Conflicted => 'U',
        Delta::Untracked => '?',
        _ => ' ',
    }
}

fn filtered(repo: &Repository, path: &Path) -> bool {
    let autocrlf = repo
        .config()
        .ok()
        .and_then(|c| c.get_string("core.autocrlf").ok())
        .is_some_and(|v| !v.eq_ignore_ascii_case("false"));
    autocrlf
        || ["text", "eol", "crlf", "ident"].iter().any(|name| {
            let value = repo.get_attr(path, name, AttrCheckFlags::FILE_THEN_INDEX);
            !matches!(
                value.map(AttrValue::from_string),
                Ok(AttrValue::Unspecified | AttrValue::False)
            )
        })
}

/// Refuses a tracked work-tree file over the blob bound that libgit2 would read whole.
fn refuse_filtered_giants(
    repo: &Repository,
    clone: &Path,
    index: &Index,
    limits: &Limits,
    deadline: Deadline,
) -> Result<()> {
    for (n, entry) in index.iter().enumerate() {
        if n % 1024 == 0 {
            deadline.check("uncommitted files")?;
        }
        if entry.mode & 0o170000 != 0o100000 {
            continue;
        }
        let path = Path::new(std::str::from_utf8(&entry.path).unwrap_or_default());
        let Ok(meta) = std::fs::symlink_metadata(clone.join(path)) else {
            continue;
        };
        if meta.is_file()
            && meta.len() > limits.max_blob_bytes
            && meta.len() as u32 == entry.file_size
            && filtered(repo, path)
        {
            return Err(exceeded(
                &format!("{}: a filtered file", path.display()),
                format!("{} bytes", limits.max_blob_bytes),
            ));
        }
    }
    Ok(())
}

/// What is uncommitted in the clone at `clone`, whose HEAD commit has `head` as tree.
pub fn uncommitted(
    repo: &Repository,
    clone: &Path,
    head: Option<&Tree>,
    limits: &Limits,
    deadline: Deadline,
) -> Result<Vec<WorktreeChange>> {
    let index = repo.index().map_err(|e| Error::git("index", e))?;
    refuse_filtered_giants(repo, clone, &index, limits, deadline)?;
    let mut sizes = BlobSizes::new(repo)?;
    let mut opts = DiffOptions::new();
    opts.include_typechange(true);
    let mut staged = diff(
        repo,
        Sides::TreeToIndex(head, &index),
        &mut opts,
        limits.max_files,
        deadline,
    )?;
    detect_renames(&mut staged, &mut sizes, limits)?;
    let mut opts = DiffOptions::new();
    opts.include_typechange(true)
        .include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false);
    let unstaged = diff(
        repo,
        Sides::IndexToWorkdir(&index),
        &mut opts,
        limits.max_files,
        deadline,
    )?;
    let mut tracked: BTreeMap<String, (char, char, Option<String>)> = BTreeMap::new();
    for delta in staged.deltas() {
        let path = lossy(delta.new_file().path_bytes());
        let old = (delta.status() == Delta::Renamed).then(|| lossy(delta.old_file().path_bytes()));
        tracked.insert(path, (letter(delta.status()), ' ', old));
    }
    let mut untracked = Vec::new();
    for delta in unstaged.deltas() {
        let path = lossy(
            delta
                .new_file()
                .path_bytes()
                .or(delta.old_file().path_bytes()),
        );
        match delta.status() {
            Delta::Untracked => untracked.push(path),
            status => tracked.entry(path).or_insert((' ', ' ', None)).1 = letter(status),
        }
    }
    if tracked.len() + untracked.len() > limits.max_files {
        return Err(exceeded("uncommitted files", limits.max_files));
    }
    let mut all: Vec<WorktreeChange> = tracked
        .into_iter()
        .map(|(path, (x, y, old_path))| WorktreeChange {
            path,
            old_path,
            status: format!("{x}{y}"),
        })
        .collect();
    untracked.sort();
    all.extend(untracked.into_iter().map(|path| WorktreeChange {
        path,
        old_path: None,
        status: "??".into(),
    }));
    Ok(all)
}
