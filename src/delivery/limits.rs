//! The bounds a read of a hostile clone stays within, and the deadline it answers by.

use std::time::{Duration, Instant};

use crate::error::{Error, ErrorCode, Result};

/// How much of a clone a read may look at. Past a bound the read rejects
/// `LIMIT_EXCEEDED` (or `TIMEOUT` for the time), never with more memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A blob larger than this is counted as binary and never loaded.
    pub max_blob_bytes: u64,
    /// Commits walked between the base and HEAD.
    pub max_commits: usize,
    /// Files listed: changed between base and HEAD, and uncommitted, each.
    pub max_files: usize,
    /// The whole read.
    pub timeout: Duration,
    /// `config`, `packed-refs`, `objects/info/alternates`: read whole by libgit2.
    pub max_metadata_bytes: u64,
    /// The index, read whole by libgit2.
    pub max_index_bytes: u64,
    /// An object copied out of the clone (`export`, `push`), read whole: larger ones are
    /// refused.
    pub max_object_bytes: u64,
    /// Objects copied out of the clone by one call.
    pub max_objects: usize,
    /// Bytes of objects copied out of the clone by one call.
    pub max_import_bytes: u64,
    /// Trees nested in a tree copied out of the clone.
    pub max_tree_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_blob_bytes: 64 << 20,
            max_commits: 100_000,
            max_files: 100_000,
            timeout: Duration::from_secs(60),
            max_metadata_bytes: 1 << 20,
            max_index_bytes: 256 << 20,
            max_object_bytes: 256 << 20,
            max_objects: 1_000_000,
            max_import_bytes: 8 << 30,
            max_tree_depth: 2048,
        }
    }
}

/// When a read must have ended.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    at: Instant,
    budget: Duration,
}

impl Deadline {
    pub fn after(budget: Duration) -> Deadline {
        Deadline {
            at: Instant::now() + budget,
            budget,
        }
    }

    pub fn passed(&self) -> bool {
        Instant::now() >= self.at
    }

    pub fn check(&self, what: &str) -> Result<()> {
        if self.passed() {
            Err(self.error(what))
        } else {
            Ok(())
        }
    }

    pub fn error(&self, what: &str) -> Error {
        Error::timeout(format!(
            "{what}: took longer than {} ms",
            self.budget.as_millis()
        ))
    }
}

pub fn exceeded(what: &str, bound: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::LimitExceeded,
        format!("{what}: more than {bound}"),
    )
}
