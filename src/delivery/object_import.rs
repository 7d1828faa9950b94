//! Objects of a hostile clone brought into a repository the host owns: only those the
//! target lacks, each read with its size known first, hashed and parsed before anything is
//! written, within bounds on sizes, counts, tree depth and time. Nothing is written until
//! every object needed has been checked, so a refused import leaves the target as it was;
//! then they go in as one pack.

use std::collections::HashSet;

use git2::{ObjectType, Odb, Oid};

use super::limits::{exceeded, Deadline, Limits};
use super::object_parse::{commit_links, tag_target, tree_entries, EntryKind};
use super::pack_file::PackFile;
use crate::error::{Error, ErrorCode, Result};

/// What an import copied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Imported {
    pub objects: usize,
    pub bytes: u64,
}

fn corrupt(id: Oid, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Git,
        format!("object {id} of the clone refused: {why}"),
    )
}

/// One object still to look at: its id, the kind its referrer says it is, and how deep in
/// trees it sits.
struct Pending {
    id: Oid,
    kind: ObjectType,
    depth: usize,
}

struct Walk<'a> {
    source: &'a Odb<'a>,
    target: &'a Odb<'a>,
    limits: &'a Limits,
    deadline: Deadline,
    seen: HashSet<Oid>,
    /// Each object to copy, with its bytes while they fit in `KEPT_BYTES`.
    needed: Vec<(Oid, ObjectType, Option<Vec<u8>>)>,
    bytes: u64,
}

/// Bytes of checked objects kept in memory for the write, instead of read a second time.
const KEPT_BYTES: u64 = 64 << 20;

impl Walk<'_> {
    /// The object's bytes, checked: the kind expected, within the size bound, hashing to
    /// its id.
    fn read_checked(&mut self, next: &Pending) -> Result<Vec<u8>> {
        let (size, kind) = self
            .source
            .read_header(next.id)
            .map_err(|e| corrupt(next.id, e.message()))?;
        if kind != next.kind {
            return Err(corrupt(
                next.id,
                format!("it is a {kind}, named as a {}", next.kind),
            ));
        }
        if size as u64 > self.limits.max_object_bytes {
            return Err(exceeded(
                &format!("object {} ({size} bytes)", next.id),
                format!("{} bytes", self.limits.max_object_bytes),
            ));
        }
        self.bytes += size as u64;
        if self.bytes > self.limits.max_import_bytes {
            return Err(exceeded(
                "bytes of objects to copy",
                self.limits.max_import_bytes,
            ));
        }
        let object = self
            .source
            .read(next.id)
            .map_err(|e| corrupt(next.id, e.message()))?;
        let data = object.data().to_vec();
        let hashed =
            Oid::hash_object(next.kind, &data).map_err(|e| corrupt(next.id, e.message()))?;
        if hashed != next.id || object.kind() != next.kind {
            return Err(corrupt(next.id, format!("its content hashes to {hashed}")));
        }
        Ok(data)
    }

    /// The objects `data` (of `next`) refers to that the walk must look at.
    fn children(&self, next: &Pending, data: &[u8]) -> Result<Vec<Pending>> {
        let at = |id, kind, depth| Pending { id, kind, depth };
        match next.kind {
            ObjectType::Commit => {
                let (tree, parents) = commit_links(data).map_err(|why| corrupt(next.id, why))?;
                let mut out = vec![at(tree, ObjectType::Tree, 1)];
                out.extend(parents.into_iter().map(|p| at(p, ObjectType::Commit, 0)));
                Ok(out)
            }
            ObjectType::Tree => {
                if next.depth > self.limits.max_tree_depth {
                    return Err(exceeded(
                        &format!("tree {} nesting", next.id),
                        format!("{} levels", self.limits.max_tree_depth),
                    ));
                }
                let entries = tree_entries(data).map_err(|why| corrupt(next.id, why))?;
                Ok(entries
                    .into_iter()
                    .filter_map(|(id, kind)| match kind {
                        EntryKind::Tree => Some(at(id, ObjectType::Tree, next.depth + 1)),
                        EntryKind::Blob => Some(at(id, ObjectType::Blob, next.depth)),
                        EntryKind::Gitlink => None,
                    })
                    .collect())
            }
            ObjectType::Tag => {
                let (id, kind) = tag_target(data).map_err(|why| corrupt(next.id, why))?;
                Ok(vec![at(id, kind, 0)])
            }
            _ => Ok(Vec::new()),
        }
    }

    /// Every object reachable from `tip` that the target lacks, checked, in `needed`.
    fn run(&mut self, tip: Oid, kind: ObjectType) -> Result<()> {
        let mut stack = vec![Pending {
            id: tip,
            kind,
            depth: 0,
        }];
        while let Some(next) = stack.pop() {
            if !self.seen.insert(next.id) || self.target.exists(next.id) {
                continue;
            }
            if self.needed.len().is_multiple_of(256) {
                self.deadline.check("copying the session's objects")?;
            }
            if self.needed.len() >= self.limits.max_objects {
                return Err(exceeded("objects to copy", self.limits.max_objects));
            }
            let data = self.read_checked(&next)?;
            stack.extend(self.children(&next, &data)?);
            let kept = (self.bytes <= KEPT_BYTES).then_some(data);
            self.needed.push((next.id, next.kind, kept));
        }
        Ok(())
    }
}

/// Copies every object reachable from `tip` (a commit) in `source` that `target` lacks;
/// an object the target has is taken to come with its history, as git's own transfer
/// does. Checked whole before the first write.
pub fn import_objects(
    source: &Odb,
    target: &Odb,
    tip: Oid,
    limits: &Limits,
    deadline: Deadline,
) -> Result<Imported> {
    let mut walk = Walk {
        source,
        target,
        limits,
        deadline,
        seen: HashSet::new(),
        needed: Vec::new(),
        bytes: 0,
    };
    walk.run(tip, ObjectType::Commit)?;
    let Walk { needed, bytes, .. } = walk;
    if needed.is_empty() {
        return Ok(Imported::default());
    }
    let mut pack = PackFile::new(target, needed.len())?;
    for (n, (id, kind, kept)) in needed.iter().enumerate() {
        if n.is_multiple_of(256) {
            deadline.check("writing the session's objects")?;
        }
        match kept {
            Some(data) => pack.add(*kind, data)?,
            None => {
                let object = source.read(*id).map_err(|e| corrupt(*id, e.message()))?;
                if object.kind() != *kind
                    || Oid::hash_object(*kind, object.data()).ok() != Some(*id)
                {
                    return Err(corrupt(*id, "it changed while it was copied"));
                }
                pack.add(*kind, object.data())?
            }
        }
    }
    pack.finish()?;
    Ok(Imported {
        objects: needed.len(),
        bytes,
    })
}
