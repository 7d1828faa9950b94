//! Where a project's devcontainer.json is: `.devcontainer/devcontainer.json`, then
//! `.devcontainer.json`, then `.devcontainer/<folder>/devcontainer.json` when exactly one
//! such folder has one.

use std::path::{Path, PathBuf};

pub fn find_config(project: &Path) -> Option<PathBuf> {
    let primary = project.join(".devcontainer").join("devcontainer.json");
    if primary.is_file() {
        return Some(primary);
    }
    let root = project.join(".devcontainer.json");
    if root.is_file() {
        return Some(root);
    }
    let mut nested: Vec<PathBuf> = std::fs::read_dir(project.join(".devcontainer"))
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("devcontainer.json"))
        .filter(|p| p.is_file())
        .collect();
    (nested.len() == 1).then(|| nested.remove(0))
}
