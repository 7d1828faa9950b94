//! Where the library keeps its state on the host: `$CONTAINER_ISOLATION_HOME`, else
//! `~/.container-isolation`.

use std::path::PathBuf;

pub fn default_base_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CONTAINER_ISOLATION_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(home);
    }
    let home = std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    home.join(".container-isolation")
}

/// The given directory, or the default one.
pub fn resolve_base_dir(given: Option<&str>) -> PathBuf {
    given
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(default_base_dir)
}
