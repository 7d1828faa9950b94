//! The host's choice for a project folder without a commit to clone (`plainFolder`).

use crate::error::{Error, Result};

/// What `create` does with a project folder that has no commit to clone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PlainFolder {
    /// Its files are snapshotted into the library's own repository; the folder is only read.
    #[default]
    Snapshot,
    /// It is made a repository with one commit of everything (a default `.gitignore` when
    /// it has none), as `CloneManager` does.
    Initialize,
}

impl PlainFolder {
    pub fn parse(text: &str) -> Result<PlainFolder> {
        match text {
            "snapshot" => Ok(PlainFolder::Snapshot),
            "initialize" => Ok(PlainFolder::Initialize),
            other => Err(Error::invalid_argument(format!(
                "plainFolder '{other}' is not 'snapshot' or 'initialize'"
            ))),
        }
    }
}
