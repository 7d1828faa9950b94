//! A session's checkpoint store: a bare repository the host owns, never the clone, at
//! `${baseDir}/checkpoints/<session>.git`. Each checkpoint is three refs,
//! `refs/checkpoints/<id>/{head,index,worktree}` (HEAD's commit; a commit on HEAD whose tree
//! is the index; one whose tree is the work tree as `git add -A` records it), and a record,
//! `records/<id>.json`, written last: a checkpoint exists once its record does. Deleting
//! removes the record first. The store moves to the trash with its session.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use super::checkpoint_record::{read_record, read_records, record_path, write_record};
use super::CheckpointRecord;
use crate::clone::{validate_session_id, CloneManager};
use crate::error::{Error, ErrorCode, Result};

/// The three commits a checkpoint keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointCommits {
    pub head: Oid,
    pub index: Oid,
    pub worktree: Oid,
}

pub struct CheckpointStore {
    dir: PathBuf,
    repo: Repository,
}

fn io(path: &Path, err: std::io::Error) -> Error {
    Error::new(ErrorCode::Git, format!("{}: {err}", path.display()))
}

/// A checkpoint id as this module makes them: 1 to 64 of `[0-9a-z-]`.
pub fn validate_checkpoint_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && !id.starts_with('-')
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase() || b == b'-');
    match ok {
        true => Ok(()),
        false => Err(Error::invalid_argument(format!(
            "checkpoint id {id:?}: expected lowercase letters, digits and '-'"
        ))),
    }
}

fn ref_name(id: &str, part: &str) -> String {
    format!("refs/checkpoints/{id}/{part}")
}

impl CheckpointStore {
    /// Where `session`'s store lives under `base_dir`.
    pub fn path(base_dir: &Path, session: &str) -> Result<PathBuf> {
        validate_session_id(session)?;
        Ok(base_dir.join("checkpoints").join(format!("{session}.git")))
    }

    /// The session's store, made empty on first use.
    pub fn open(base_dir: &Path, session: &str) -> Result<CheckpointStore> {
        let dir = Self::path(base_dir, session)?;
        let repo = match Repository::open_bare(&dir) {
            Ok(repo) => repo,
            Err(_) => {
                let parent = dir.parent().unwrap_or(base_dir);
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
                Repository::init_bare(&dir).map_err(|e| Error::git("checkpoint store", e))?
            }
        };
        Ok(CheckpointStore { dir, repo })
    }

    /// The session's store if it has one (nothing is made).
    pub fn existing(base_dir: &Path, session: &str) -> Result<Option<CheckpointStore>> {
        let dir = Self::path(base_dir, session)?;
        if !dir.exists() {
            return Ok(None);
        }
        let repo = Repository::open_bare(&dir).map_err(|e| Error::git("checkpoint store", e))?;
        Ok(Some(CheckpointStore { dir, repo }))
    }

    /// The session's checkpoint `id`; `ENOENT` naming the session where it has none such.
    pub fn find(base_dir: &Path, session: &str, id: &str) -> Result<CheckpointRecord> {
        validate_checkpoint_id(id)?;
        let missing = || {
            Error::new(
                ErrorCode::Enoent,
                format!("session '{session}' has no checkpoint '{id}'"),
            )
        };
        Self::existing(base_dir, session)?
            .ok_or_else(missing)?
            .get(id)
    }

    /// The session's checkpoints, oldest first; none when it never had one.
    pub fn list_of(base_dir: &Path, session: &str) -> Result<Vec<CheckpointRecord>> {
        match Self::existing(base_dir, session)? {
            Some(store) => store.list(),
            None => Ok(Vec::new()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn repo(&self) -> &Repository {
        &self.repo
    }

    fn records(&self) -> PathBuf {
        self.dir.join("records")
    }

    /// Keeps `commits` under `record.id`'s refs, then the record.
    pub fn save(&self, record: &CheckpointRecord, commits: CheckpointCommits) -> Result<()> {
        validate_checkpoint_id(&record.id)?;
        let log = format!("container-isolation: checkpoint {}", record.id);
        for (part, id) in [
            ("head", commits.head),
            ("index", commits.index),
            ("worktree", commits.worktree),
        ] {
            self.repo
                .reference(&ref_name(&record.id, part), id, true, &log)
                .map_err(|e| Error::git("checkpoint ref", e))?;
        }
        write_record(&self.records(), record)
    }

    /// Rewrites an existing checkpoint's record (its image added); `ENOENT` when it is
    /// gone (deleted meanwhile).
    pub fn update(&self, record: &CheckpointRecord) -> Result<()> {
        self.get(&record.id)?;
        write_record(&self.records(), record)
    }

    /// The checkpoint `id`; `ENOENT` when the store has none of that id.
    pub fn get(&self, id: &str) -> Result<CheckpointRecord> {
        validate_checkpoint_id(id)?;
        read_record(&self.records(), id)
    }

    /// The commits the checkpoint's refs point at.
    pub fn commits(&self, id: &str) -> Result<CheckpointCommits> {
        let at = |part| {
            self.repo
                .refname_to_id(&ref_name(id, part))
                .map_err(|e| Error::git(&format!("checkpoint {id}"), e))
        };
        Ok(CheckpointCommits {
            head: at("head")?,
            index: at("index")?,
            worktree: at("worktree")?,
        })
    }

    /// Every checkpoint, oldest first.
    pub fn list(&self) -> Result<Vec<CheckpointRecord>> {
        read_records(&self.records())
    }

    /// Removes the checkpoint (its record, then its refs); `false` when there was none.
    /// Its objects stay in the store until it is trashed.
    pub fn delete(&self, id: &str) -> Result<bool> {
        validate_checkpoint_id(id)?;
        let path = record_path(&self.records(), id);
        let existed = match std::fs::remove_file(&path) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(io(&path, e)),
        };
        for part in ["head", "index", "worktree"] {
            if let Ok(mut r) = self.repo.find_reference(&ref_name(id, part)) {
                r.delete().map_err(|e| Error::git("checkpoint ref", e))?;
            }
        }
        Ok(existed)
    }

    /// Drops the oldest checkpoints until at most `keep` are left; returns those dropped
    /// (their images, if any, are the caller's to remove).
    pub fn keep_at_most(&self, keep: usize) -> Result<Vec<CheckpointRecord>> {
        let all = self.list()?;
        let excess = all.len().saturating_sub(keep);
        let dropped: Vec<CheckpointRecord> = all.into_iter().take(excess).collect();
        for record in &dropped {
            self.delete(&record.id)?;
        }
        Ok(dropped)
    }
}

/// Moves `session`'s store to `${baseDir}/.trash/<stamp>/checkpoints-<session>.git`, as
/// `destroy` moves its clone; `None` when it had none.
pub fn trash_store(clones: &CloneManager, session: &str) -> Result<Option<PathBuf>> {
    let source = CheckpointStore::path(clones.base_dir(), session)?;
    if !source.exists() {
        return Ok(None);
    }
    let name = format!("checkpoints-{session}.git");
    let bin = clones.new_trash_bin(&name)?;
    let destination = bin.join(&name);
    match std::fs::rename(&source, &destination) {
        Ok(()) => Ok(Some(destination)),
        Err(e) => {
            let _ = std::fs::remove_dir(&bin);
            match e.kind() == std::io::ErrorKind::NotFound && !source.exists() {
                true => Ok(None),
                false => Err(io(&source, e)),
            }
        }
    }
}
