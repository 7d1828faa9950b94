//! What the store keeps about one checkpoint beside its refs: a small JSON file per
//! checkpoint, `records/<id>.json` in the store, written whole to a temporary name and
//! renamed into place (a crash leaves the old record or the new one, never half of one).

use std::io::Write;
use std::path::{Path, PathBuf};

use git2::Oid;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};

/// One checkpoint of a session's clone (and, once committed, of its container).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointRecord {
    pub id: String,
    pub label: Option<String>,
    pub created_at_ms: i64,
    /// The clone's HEAD commit.
    pub head: String,
    /// The branch HEAD was on (`refs/heads/…`); `None`: HEAD was detached.
    pub branch: Option<String>,
    /// The index, as a tree.
    pub index_tree: String,
    /// The work tree as `git add -A` would record it.
    pub worktree_tree: String,
    /// The container's commit, when the container half was taken.
    pub image: Option<String>,
    /// What the container had changed when it was committed (its own layer), in bytes.
    #[serde(default)]
    pub bytes: Option<u64>,
}

fn oid(text: &str, what: &str) -> Result<Oid> {
    Oid::from_str(text).map_err(|e| Error::git(&format!("checkpoint record: {what}"), e))
}

impl CheckpointRecord {
    pub fn head_id(&self) -> Result<Oid> {
        oid(&self.head, "head")
    }

    pub fn index_tree_id(&self) -> Result<Oid> {
        oid(&self.index_tree, "index tree")
    }

    pub fn worktree_tree_id(&self) -> Result<Oid> {
        oid(&self.worktree_tree, "work tree tree")
    }
}

fn io(path: &Path, err: std::io::Error) -> Error {
    let code = match err.kind() {
        std::io::ErrorKind::NotFound => ErrorCode::Enoent,
        _ => ErrorCode::Git,
    };
    Error::new(code, format!("{}: {err}", path.display()))
}

pub fn record_path(records: &Path, id: &str) -> PathBuf {
    records.join(format!("{id}.json"))
}

/// Writes `record` under `records`, replacing one of the same id whole.
pub fn write_record(records: &Path, record: &CheckpointRecord) -> Result<()> {
    std::fs::create_dir_all(records).map_err(|e| io(records, e))?;
    let target = record_path(records, &record.id);
    let temp = records.join(format!(
        ".{}.{}.tmp",
        record.id,
        uuid::Uuid::new_v4().simple()
    ));
    let text = serde_json::to_vec_pretty(record)
        .map_err(|e| Error::new(ErrorCode::Git, format!("checkpoint record: {e}")))?;
    let written = std::fs::File::create(&temp)
        .and_then(|mut f| f.write_all(&text).and_then(|_| f.sync_all()))
        .and_then(|_| std::fs::rename(&temp, &target));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(io(&target, e));
    }
    Ok(())
}

pub fn read_record(records: &Path, id: &str) -> Result<CheckpointRecord> {
    let path = record_path(records, id);
    let text = std::fs::read(&path).map_err(|e| io(&path, e))?;
    serde_json::from_slice(&text).map_err(|e| {
        Error::new(
            ErrorCode::Git,
            format!("checkpoint record {}: {e}", path.display()),
        )
    })
}

/// Every readable record under `records`, oldest first.
pub fn read_records(records: &Path) -> Result<Vec<CheckpointRecord>> {
    let entries = match std::fs::read_dir(records) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(records, e)),
    };
    let mut found: Vec<CheckpointRecord> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_suffix(".json")?;
            (!id.starts_with('.')).then(|| read_record(records, id).ok())?
        })
        .collect();
    found.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
    Ok(found)
}
