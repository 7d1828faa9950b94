//! The bind mounts of the containers a runtime has created, inspected or listed in this
//! process, under every id they were seen by, for the synchronous path translations of
//! docs/contract.md §2.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::container_mount::ContainerMount;
use super::path_translation::{translate, Direction};
use crate::error::{Error, ErrorCode, Result};

#[derive(Default)]
pub struct KnownMounts(Mutex<HashMap<String, Vec<ContainerMount>>>);

impl KnownMounts {
    fn map(&self) -> MutexGuard<'_, HashMap<String, Vec<ContainerMount>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `mounts` under each non-empty id.
    pub fn remember(&self, ids: &[&str], mounts: Vec<ContainerMount>) {
        let mut map = self.map();
        for id in ids.iter().filter(|id| !id.is_empty()) {
            map.insert(id.to_string(), mounts.clone());
        }
    }

    pub fn forget(&self, ids: &[&str]) {
        let mut map = self.map();
        for id in ids {
            map.remove(*id);
        }
    }

    /// Translates `path` through the mounts known for `id`; an id not seen here is
    /// `CONTAINER_NOT_FOUND`.
    pub fn translate(&self, path: &str, id: &str, direction: Direction) -> Result<String> {
        let map = self.map();
        let mounts = map.get(id).ok_or_else(|| {
            Error::new(
                ErrorCode::ContainerNotFound,
                format!(
                    "container '{id}' is not known to this runtime: create or inspect it first to translate '{path}'"
                ),
            )
        })?;
        Ok(translate(path, mounts, direction))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_under_every_id_until_forgotten() {
        let known = KnownMounts::default();
        let mounts = vec![ContainerMount::bind("/host/w", "/workspace", false)];
        known.remember(&["name", "", "0123abc"], mounts);
        for id in ["name", "0123abc"] {
            assert_eq!(
                known
                    .translate("/host/w/a", id, Direction::ToContainer)
                    .unwrap(),
                "/workspace/a"
            );
        }
        known.forget(&["name", "0123abc"]);
        let err = known
            .translate("/host/w/a", "name", Direction::ToContainer)
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::ContainerNotFound);
        assert!(known
            .translate("/host/w", "", Direction::ToContainer)
            .is_err());
    }
}
