//! A test's way to make an export or push slow just before it writes (as a slow copy
//! would), to show that a caller told `TIMEOUT` finds nothing written. Outside tests it
//! does nothing.

use std::path::Path;
#[cfg(test)]
use std::{collections::HashMap, path::PathBuf, sync::Mutex, time::Duration};

#[cfg(test)]
static PAUSES: Mutex<Option<HashMap<PathBuf, Duration>>> = Mutex::new(None);

/// Work staged under `staging_root` pauses for `pause` before it writes.
#[cfg(test)]
pub fn pause_before_writing(staging_root: &Path, pause: Duration) {
    let mut pauses = PAUSES.lock().unwrap();
    pauses
        .get_or_insert_with(HashMap::new)
        .insert(staging_root.to_path_buf(), pause);
}

#[cfg(test)]
pub fn before_writing(staging_root: &Path) {
    let pause = PAUSES
        .lock()
        .unwrap()
        .as_ref()
        .and_then(|p| p.get(staging_root).copied());
    if let Some(pause) = pause {
        std::thread::sleep(pause);
    }
}

#[cfg(not(test))]
#[inline(always)]
pub fn before_writing(_staging_root: &Path) {}
