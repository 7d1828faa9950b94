//! What an engine says about itself once it answers.

use super::options::EngineKind;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineInfo {
    pub kind: EngineKind,
    pub endpoint: String,
    pub version: String,
    pub api_version: String,
    pub os: String,
    pub arch: String,
    /// The engine shares this machine's kernel and file system (probed at connect).
    pub local: bool,
}

/// Podman's Docker-compatible API answers `/version` like Docker, but names itself in the
/// platform or in a component.
pub fn kind_from_version(version: &bollard::models::SystemVersion) -> EngineKind {
    let platform_says_podman = version
        .platform
        .as_ref()
        .is_some_and(|p| p.name.to_ascii_lowercase().contains("podman"));
    let component_says_podman = version.components.as_ref().is_some_and(|components| {
        components
            .iter()
            .any(|c| c.name.to_ascii_lowercase().contains("podman"))
    });
    if platform_says_podman || component_says_podman {
        EngineKind::Podman
    } else {
        EngineKind::Docker
    }
}
