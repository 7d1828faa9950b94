//! What a workspace is, kept at `${baseDir}/workspaces/<sessionId>.json` so that `get` and
//! `list` work from any process.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::workspace_storage::Storage;
use crate::compose_services::StoredServices;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::{labels, Lifetime, OwnerIdentity, ResourceLimits};
use crate::session_settings::SessionSettings;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceRecord {
    pub session_id: String,
    pub project_dir: String,
    pub clone_path: String,
    pub branch_name: String,
    /// The commit the session branch started at (its `ref`, else the project's HEAD): the
    /// base of `changes`. Records from before it was kept have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// For a session made from a remote repository: its URL (no credentials); the
    /// project is then the library's own clone of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository_url: Option<String>,
    /// For a session made from a plain folder's snapshot: that folder; the project is then
    /// the library's own repository of the snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_of: Option<String>,
    pub container_id: String,
    pub container_mount_path: String,
    /// Where the repository lives for the container (records from before: `bind`).
    #[serde(default)]
    pub storage: Storage,
    /// With `volume` storage: the engine volume holding the repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
    pub image: String,
    pub lifetime: String,
    /// Whether devcontainer.json is honoured (lifecycle commands on (re)start).
    pub devcontainer: bool,
    pub created_at_ms: i64,
    /// The settings every container of the session is made with, fixed at its creation.
    /// Records from before they were kept have none: they are resolved again from the
    /// project (never from the clone) under the host's trust.
    #[serde(default)]
    pub settings: Option<SessionSettings>,
    /// A Compose devcontainer's other services, started with the session's container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compose: Option<StoredServices>,
    /// The image its container is made from when not its settings' own: a checkpoint's,
    /// after a restore or for a fork (the lifecycle commands of a new container ran before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_image: Option<String>,
    /// For a `process` workspace, the owner labels of the process it lives as long as (pid,
    /// start time, boot id, host), so that its clone can be judged after its container is
    /// gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<BTreeMap<String, String>>,
    /// A session on Kubernetes: its Pod's variables and limits, with which the Pod is made
    /// again when it went (engine sessions keep theirs in `settings`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pod_env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "is_unlimited")]
    pub pod_resources: ResourceLimits,
    /// A session on Kubernetes: its egress (`None` in records from before the relay reached
    /// the cluster: `'none'`, no relay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_egress: Option<crate::egress::EgressSpec>,
}

fn is_unlimited(limits: &ResourceLimits) -> bool {
    *limits == ResourceLimits::default()
}

/// The owner labels a workspace of `lifetime` records: this process's, for `process`.
pub fn owner_for(lifetime: Lifetime) -> Option<BTreeMap<String, String>> {
    (lifetime == Lifetime::Process).then(|| {
        labels::owner_labels(OwnerIdentity::current())
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    })
}

fn io_error(path: &Path, err: std::io::Error) -> Error {
    Error::new(ErrorCode::Enoent, format!("{}: {err}", path.display()))
}

pub fn records_dir(base_dir: &Path) -> PathBuf {
    base_dir.join("workspaces")
}

fn record_path(base_dir: &Path, session_id: &str) -> PathBuf {
    records_dir(base_dir).join(format!("{session_id}.json"))
}

/// Written aside and renamed, so a reader never sees half a record.
pub fn save(base_dir: &Path, record: &WorkspaceRecord) -> Result<()> {
    let dir = records_dir(base_dir);
    std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
    let path = record_path(base_dir, &record.session_id);
    let temp = dir.join(format!(
        ".{}.{}.tmp",
        record.session_id,
        uuid::Uuid::new_v4().simple()
    ));
    let text = serde_json::to_vec_pretty(record)
        .map_err(|e| Error::new(ErrorCode::EngineError, e.to_string()))?;
    std::fs::write(&temp, text).map_err(|e| io_error(&temp, e))?;
    std::fs::rename(&temp, &path).map_err(|e| io_error(&path, e))
}

pub fn load(base_dir: &Path, session_id: &str) -> Result<Option<WorkspaceRecord>> {
    let path = record_path(base_dir, session_id);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| Error::new(ErrorCode::EngineError, format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(&path, e)),
    }
}

pub fn remove(base_dir: &Path, session_id: &str) -> Result<()> {
    let path = record_path(base_dir, session_id);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(&path, e)),
    }
}

pub fn session_ids(base_dir: &Path) -> Result<Vec<String>> {
    let dir = records_dir(base_dir);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(&dir, e)),
    };
    let mut ids: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            (!name.starts_with('.'))
                .then(|| name.strip_suffix(".json").map(str::to_string))
                .flatten()
        })
        .collect();
    ids.sort();
    Ok(ids)
}
