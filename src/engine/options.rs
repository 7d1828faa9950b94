//! How a caller says which engine to use, and how long a request may take.

use std::time::Duration;

pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(120_000);

/// The engine families this library speaks to through the Docker Engine API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EngineKind {
    Docker,
    Podman,
}

impl EngineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Docker => "docker",
            EngineKind::Podman => "podman",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EngineOptions {
    pub socket_path: Option<String>,
    pub host: Option<String>,
    pub kind: Option<EngineKind>,
    pub timeout: Duration,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            socket_path: None,
            host: None,
            kind: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}
