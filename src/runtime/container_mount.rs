//! A mount as a caller asks for it and an engine reports it: bind, volume or tmpfs.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MountKind {
    Bind,
    Volume,
    Tmpfs,
}

impl MountKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MountKind::Bind => "bind",
            MountKind::Volume => "volume",
            MountKind::Tmpfs => "tmpfs",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerMount {
    pub kind: MountKind,
    /// A host path (bind), a volume's name (empty: an anonymous volume), nothing (tmpfs).
    pub source: String,
    pub target: String,
    pub readonly: bool,
    /// `bind-propagation` (bind mounts).
    #[serde(default)]
    pub propagation: Option<String>,
    /// `volume-nocopy` (volumes).
    #[serde(default)]
    pub no_copy: bool,
    /// Size in bytes and mode of a tmpfs.
    #[serde(default)]
    pub tmpfs_size: Option<i64>,
    #[serde(default)]
    pub tmpfs_mode: Option<i64>,
}

impl ContainerMount {
    pub fn new(kind: MountKind, source: &str, target: &str) -> ContainerMount {
        ContainerMount {
            kind,
            source: source.to_string(),
            target: target.to_string(),
            readonly: false,
            propagation: None,
            no_copy: false,
            tmpfs_size: None,
            tmpfs_mode: None,
        }
    }

    pub fn bind(source: &str, target: &str, readonly: bool) -> ContainerMount {
        ContainerMount {
            readonly,
            ..ContainerMount::new(MountKind::Bind, source, target)
        }
    }
}
