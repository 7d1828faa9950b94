//! Where a session's repository lives for its container: the host clone bind-mounted
//! (`bind`), or a named volume on the engine holding a copy of it (`volume`), which is what
//! an engine on another machine needs. `auto` is `bind` where the engine shares this
//! machine's files.

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Storage {
    /// Records from before storage was kept are bind-mounted clones.
    #[default]
    Bind,
    Volume,
    /// A session on Kubernetes: the Pod's own file system, given the clone at every start.
    Pod,
}

/// What the host asks for: a storage, or the engine's natural one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StorageChoice {
    #[default]
    Auto,
    Bind,
    Volume,
}

impl Storage {
    pub fn as_str(self) -> &'static str {
        match self {
            Storage::Bind => "bind",
            Storage::Volume => "volume",
            Storage::Pod => "pod",
        }
    }
}

impl StorageChoice {
    /// `auto`, `bind` or `volume`; anything else is `INVALID_ARGUMENT`.
    pub fn parse(text: &str) -> Result<StorageChoice> {
        match text {
            "auto" => Ok(StorageChoice::Auto),
            "bind" => Ok(StorageChoice::Bind),
            "volume" => Ok(StorageChoice::Volume),
            other => Err(Error::invalid_argument(format!(
                "storage {other:?}: expected 'auto', 'bind' or 'volume'"
            ))),
        }
    }

    /// The storage new sessions on `engine` get.
    pub fn resolve(self, engine: &Engine) -> Storage {
        match self {
            StorageChoice::Bind => Storage::Bind,
            StorageChoice::Volume => Storage::Volume,
            StorageChoice::Auto if engine.endpoint().is_unix() || engine.is_local() => {
                Storage::Bind
            }
            StorageChoice::Auto => Storage::Volume,
        }
    }
}

pub use crate::workspace_volume::volume_name;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_and_old_records_are_bind() {
        assert_eq!(
            StorageChoice::parse("volume").unwrap(),
            StorageChoice::Volume
        );
        assert!(StorageChoice::parse("nfs").is_err());
        let old: Storage = serde_json::from_str("\"bind\"").unwrap();
        assert_eq!(old, Storage::default());
        assert_eq!(volume_name("ws-a-1"), "ws-a-1-workspace");
    }
}
