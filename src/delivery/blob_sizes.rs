//! Object sizes read from object headers (a loose object's first bytes, a pack entry's
//! header), so that deciding whether a blob is too big never loads it.

use std::collections::HashMap;

use git2::{DiffFile, FileMode, Odb, Oid};

use crate::error::{Error, ErrorCode, Result};

pub struct BlobSizes<'r> {
    odb: Odb<'r>,
    known: HashMap<Oid, u64>,
}

impl<'r> BlobSizes<'r> {
    pub fn new(repo: &'r git2::Repository) -> Result<Self> {
        let odb = repo
            .odb()
            .map_err(|e| Error::new(ErrorCode::Git, format!("object database: {}", e.message())))?;
        Ok(BlobSizes {
            odb,
            known: HashMap::new(),
        })
    }

    /// The size of the blob on this side of a delta; 0 for no blob (an absent side, a
    /// submodule's commit).
    pub fn of(&mut self, file: &DiffFile) -> Result<u64> {
        let id = file.id();
        if id.is_zero() || file.mode() == FileMode::Commit || file.mode() == FileMode::Unreadable {
            return Ok(0);
        }
        if let Some(size) = self.known.get(&id) {
            return Ok(*size);
        }
        let (size, _) = self
            .odb
            .read_header(id)
            .map_err(|e| Error::new(ErrorCode::Git, format!("object {id}: {}", e.message())))?;
        self.known.insert(id, size as u64);
        Ok(size as u64)
    }
}
