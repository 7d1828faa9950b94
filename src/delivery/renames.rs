//! Rename detection as git's default does it (50 % similarity, up to 1,000 candidates),
//! except that similarity, which loads each candidate blob whole, is only computed when
//! every candidate is within the blob bound and all of them within a few times it:
//! otherwise only exact renames (same object id) are paired, which loads nothing.

use git2::{Delta, Diff, DiffFindOptions};

use super::blob_sizes::BlobSizes;
use super::limits::Limits;
use crate::error::{Error, ErrorCode, Result};

/// git's `diff.renameLimit` default.
const RENAME_CANDIDATES: usize = 1000;

/// Whether comparing the contents of the added and deleted files stays within bounds.
fn contents_comparable(diff: &Diff, sizes: &mut BlobSizes, limits: &Limits) -> Result<bool> {
    let mut total: u64 = 0;
    for delta in diff.deltas() {
        let file = match delta.status() {
            Delta::Added => delta.new_file(),
            Delta::Deleted => delta.old_file(),
            _ => continue,
        };
        let size = sizes.of(&file)?;
        total = total.saturating_add(size);
        if size > limits.max_blob_bytes || total > limits.max_blob_bytes.saturating_mul(4) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Pairs deleted and added files of `diff` into renames.
pub fn detect_renames(diff: &mut Diff, sizes: &mut BlobSizes, limits: &Limits) -> Result<()> {
    let mut find = DiffFindOptions::new();
    find.renames(true).rename_limit(RENAME_CANDIDATES);
    if !contents_comparable(diff, sizes, limits)? {
        find.exact_match_only(true);
    }
    diff.find_similar(Some(&mut find))
        .map_err(|e| Error::new(ErrorCode::Git, format!("rename detection: {}", e.message())))
}
