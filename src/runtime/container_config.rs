//! What a caller asks for when creating a container.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerMount {
    pub source: String,
    pub target: String,
    pub readonly: bool,
}

/// Who a container lives for: the creating process, or a session that outlives processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lifetime {
    Process,
    #[default]
    Session,
}

impl Lifetime {
    pub fn as_str(self) -> &'static str {
        match self {
            Lifetime::Process => "process",
            Lifetime::Session => "session",
        }
    }

    pub fn parse(text: &str) -> Option<Lifetime> {
        match text {
            "process" => Some(Lifetime::Process),
            "session" => Some(Lifetime::Session),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ContainerConfig {
    pub id: Option<String>,
    pub name: Option<String>,
    pub image: Option<String>,
    pub working_directory: String,
    pub mounts: Vec<ContainerMount>,
    /// `Some`: a job whose main process is this command. `None`: a sandbox kept alive.
    pub command: Option<Vec<String>>,
    pub environment: BTreeMap<String, String>,
    pub memory: Option<i64>,
    pub cpu_shares: Option<i64>,
    pub labels: BTreeMap<String, String>,
    pub user: Option<String>,
    pub network: Option<String>,
    pub lifetime: Lifetime,
    /// Recorded in the session label; defaults to `id`, else the container name.
    pub session_id: Option<String>,
    pub clone_path: Option<String>,
    pub project_dir: Option<String>,
}
