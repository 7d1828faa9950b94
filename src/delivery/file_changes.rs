//! The files changed between two trees, as `git diff --name-status` and `--numstat` tell
//! them (renames found as git finds them by default), each blob looked at only when it is
//! within the blob bound; and, when asked, their unified diff.

use git2::{Delta, DiffDelta, DiffOptions, Patch, Repository, Tree};

use super::blob_sizes::BlobSizes;
use super::bounded_diff::{diff, Sides};
use super::limits::{Deadline, Limits};
use super::patch_text::PatchText;
use super::renames::detect_renames;
use crate::error::{Error, Result};

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
    Copied,
    /// Its kind changed (file, symlink, submodule).
    Typechange,
}

impl FileStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Added => "added",
            FileStatus::Modified => "modified",
            FileStatus::Deleted => "deleted",
            FileStatus::Renamed => "renamed",
            FileStatus::Copied => "copied",
            FileStatus::Typechange => "typechange",
        }
    }

    fn of(delta: Delta) -> Option<FileStatus> {
        Some(match delta {
            Delta::Added => FileStatus::Added,
            Delta::Modified => FileStatus::Modified,
            Delta::Deleted => FileStatus::Deleted,
            Delta::Renamed => FileStatus::Renamed,
            Delta::Copied => FileStatus::Copied,
            Delta::Typechange => FileStatus::Typechange,
            _ => return None,
        })
    }
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    /// Its path in the base, for a rename or copy.
    pub old_path: Option<String>,
    pub status: FileStatus,
    /// Lines added and deleted; 0 for a binary file.
    pub additions: u64,
    pub deletions: u64,
    /// Binary by content, or over the blob bound.
    pub binary: bool,
}

pub(super) fn lossy(bytes: Option<&[u8]>) -> String {
    bytes
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .unwrap_or_default()
}

fn entry(delta: &DiffDelta, status: FileStatus) -> FileChange {
    let path = lossy(
        delta
            .new_file()
            .path_bytes()
            .or(delta.old_file().path_bytes()),
    );
    let old = lossy(delta.old_file().path_bytes());
    FileChange {
        old_path: matches!(status, FileStatus::Renamed | FileStatus::Copied).then_some(old),
        path,
        status,
        additions: 0,
        deletions: 0,
        binary: false,
    }
}

/// The files changed from `base` (none: the empty tree) to `head`, with the patch text
/// appended to `patch` when given.
pub fn changed_files(
    repo: &Repository,
    base: Option<&Tree>,
    head: &Tree,
    limits: &Limits,
    deadline: Deadline,
    mut patch: Option<&mut PatchText>,
) -> Result<Vec<FileChange>> {
    let mut opts = DiffOptions::new();
    opts.max_size(i64::try_from(limits.max_blob_bytes).unwrap_or(i64::MAX))
        .include_typechange(true);
    let mut found = diff(
        repo,
        Sides::Trees(base, head),
        &mut opts,
        limits.max_files,
        deadline,
    )?;
    let mut sizes = BlobSizes::new(repo)?;
    detect_renames(&mut found, &mut sizes, limits)?;
    let mut files = Vec::with_capacity(found.deltas().len());
    for (index, delta) in found.deltas().enumerate() {
        if index % 256 == 0 {
            deadline.check("changed files")?;
        }
        let Some(status) = FileStatus::of(delta.status()) else {
            continue;
        };
        let mut change = entry(&delta, status);
        let oversized = sizes.of(&delta.old_file())? > limits.max_blob_bytes
            || sizes.of(&delta.new_file())? > limits.max_blob_bytes;
        if oversized {
            change.binary = true;
            if let Some(text) = patch.as_deref_mut() {
                text.push_oversized(&delta);
            }
        } else if let Some(mut one) =
            Patch::from_diff(&found, index).map_err(|e| Error::git("diff", e))?
        {
            change.binary = one.delta().flags().is_binary();
            if !change.binary {
                let (_, added, deleted) = one.line_stats().map_err(|e| Error::git("diff", e))?;
                (change.additions, change.deletions) = (added as u64, deleted as u64);
            }
            if let Some(text) = patch.as_deref_mut().filter(|t| t.open()) {
                text.push_patch(&mut one)?;
            }
        }
        files.push(change);
    }
    Ok(files)
}
