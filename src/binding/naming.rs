//! `computeContainerName` (docs/contract.md §6).

use napi_derive::napi;

/// `'agentbox-' + sha256(projectDir)` hex, first 12 digits.
#[napi]
pub fn compute_container_name(project_dir: String) -> String {
    crate::runtime::compute_container_name(&project_dir)
}
