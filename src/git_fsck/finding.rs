//! What a check found wrong with an object: git's own name for the problem (the message
//! id `git fsck` prints, e.g. `treeNotSorted`) and a line saying where.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// git's message id, as `fsck.<id>` configures it.
    pub id: &'static str,
    pub detail: String,
}

impl Finding {
    pub fn new(id: &'static str, detail: impl Into<String>) -> Finding {
        Finding {
            id,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.id, self.detail)
    }
}
