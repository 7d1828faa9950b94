//! The walk that decides which of a session's objects may leave, from one commit down: every
//! object read with its size known first, hashed, and checked as git's fsck checks it
//! (`git_fsck`); every reference checked against the type it implies — a commit's tree is a
//! tree, its parents commits, a tree entry's object what its mode says — on every path to
//! the object, not once per id, including objects the destination already has (whose type
//! is read there; they are not descended: they come with their history). A blob a tree
//! names as `.gitmodules` or `.gitattributes` has its contents checked wherever it lives.

use std::collections::{HashMap, HashSet};

use git2::{ObjectType, Odb, Oid};

use super::limits::{exceeded, Deadline, Limits};
use crate::error::{Error, ErrorCode, Result};
use crate::git_fsck::{check_commit, check_special_blob, check_tree, EntryKind, SpecialFile};

pub fn refused(id: Oid, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Git,
        format!("object {id} of the session refused: {why}"),
    )
}

/// One object still to look at: its id, the kind its referrer says it is, who referred to
/// it, how deep in trees it sits, and which parsed dot file it is named as.
struct Pending {
    id: Oid,
    kind: ObjectType,
    from: Option<Oid>,
    depth: usize,
    special: Option<SpecialFile>,
}

/// What a walk has checked: each object's type, and the dot-file contents checked.
#[derive(Default)]
pub struct Checked {
    kinds: HashMap<Oid, ObjectType>,
    special: HashSet<(Oid, SpecialFile)>,
}

/// An object the walk found that the destination lacks, with its bytes while they fit in
/// the walk's memory budget.
pub struct NewObject {
    pub id: Oid,
    pub kind: ObjectType,
    pub data: Option<Vec<u8>>,
}

pub struct ObjectWalk<'a> {
    /// Where objects the destination lacks are read.
    pub source: &'a Odb<'a>,
    /// The destination's objects: checked for type, never descended.
    pub trusted: &'a Odb<'a>,
    pub limits: &'a Limits,
    pub deadline: Deadline,
    pub checked: Checked,
    pub found: Vec<NewObject>,
    pub bytes: u64,
    /// Bytes of new objects kept in memory; past it `NewObject::data` is `None`.
    pub keep_bytes: u64,
    visits: usize,
}

fn mismatch(next: &Pending, actual: ObjectType) -> Error {
    let named = match next.from {
        Some(from) => format!("{from} names it as a {}", next.kind),
        None => format!("it is wanted as a {}", next.kind),
    };
    refused(
        next.id,
        format!("it is a {actual}, but {named} (git fsck: bad pointer)"),
    )
}

impl<'a> ObjectWalk<'a> {
    pub fn new(
        source: &'a Odb<'a>,
        trusted: &'a Odb<'a>,
        limits: &'a Limits,
        deadline: Deadline,
        checked: Checked,
    ) -> ObjectWalk<'a> {
        ObjectWalk {
            source,
            trusted,
            limits,
            deadline,
            checked,
            found: Vec::new(),
            bytes: 0,
            keep_bytes: 64 << 20,
            visits: 0,
        }
    }

    /// Checks everything `tip` (a commit) reaches that is not checked yet.
    pub fn run(&mut self, tip: Oid) -> Result<()> {
        let mut stack = vec![Pending {
            id: tip,
            kind: ObjectType::Commit,
            from: None,
            depth: 0,
            special: None,
        }];
        while let Some(next) = stack.pop() {
            self.visits += 1;
            if self.visits.is_multiple_of(256) {
                self.deadline.check("checking the session's objects")?;
            }
            if let Some(&kind) = self.checked.kinds.get(&next.id) {
                self.check_known(&next, kind)?;
                continue;
            }
            if let Some(kind) = self.trusted_kind(next.id)? {
                self.checked.kinds.insert(next.id, kind);
                self.check_known(&next, kind)?;
                continue;
            }
            if self.found.len() >= self.limits.max_objects {
                return Err(exceeded("objects to copy", self.limits.max_objects));
            }
            let data = self.read_checked(self.source, &next)?;
            stack.extend(self.children(&next, &data)?);
            self.checked.kinds.insert(next.id, next.kind);
            let data = (self.bytes <= self.keep_bytes).then_some(data);
            self.found.push(NewObject {
                id: next.id,
                kind: next.kind,
                data,
            });
        }
        Ok(())
    }

    /// The type of `id` in the destination, in one lookup; `None` when it lacks it.
    fn trusted_kind(&self, id: Oid) -> Result<Option<ObjectType>> {
        match self.trusted.read_header(id) {
            Ok((_, kind)) => Ok(Some(kind)),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(Error::git(&format!("object {id}"), e)),
        }
    }

    /// An object seen before (or in the destination): its type as named, and its contents
    /// if it is named as a dot file git parses for the first time.
    fn check_known(&mut self, next: &Pending, kind: ObjectType) -> Result<()> {
        if kind != next.kind {
            return Err(mismatch(next, kind));
        }
        let Some(file) = next.special else {
            return Ok(());
        };
        if self.checked.special.contains(&(next.id, file)) {
            return Ok(());
        }
        let odb = match self.trusted.exists(next.id) {
            true => self.trusted,
            false => self.source,
        };
        let data = self.read_checked(odb, next)?;
        check_special_blob(file, &data).map_err(|why| refused(next.id, why))?;
        self.checked.special.insert((next.id, file));
        Ok(())
    }

    /// The object's bytes: the kind named, within the size bound, hashing to its id.
    fn read_checked(&mut self, odb: &Odb, next: &Pending) -> Result<Vec<u8>> {
        let (size, kind) = odb
            .read_header(next.id)
            .map_err(|e| refused(next.id, e.message()))?;
        if kind != next.kind {
            return Err(mismatch(next, kind));
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
        let object = odb
            .read(next.id)
            .map_err(|e| refused(next.id, e.message()))?;
        let hashed = Oid::hash_object(next.kind, object.data())
            .map_err(|e| refused(next.id, e.message()))?;
        if hashed != next.id || object.kind() != next.kind {
            return Err(refused(next.id, format!("its content hashes to {hashed}")));
        }
        Ok(object.data().to_vec())
    }

    /// What `data` (of `next`) refers to, each with the kind the reference implies.
    fn children(&mut self, next: &Pending, data: &[u8]) -> Result<Vec<Pending>> {
        let at = |id, kind, depth, special| Pending {
            id,
            kind,
            from: Some(next.id),
            depth,
            special,
        };
        match next.kind {
            ObjectType::Commit => {
                let links = check_commit(data).map_err(|why| refused(next.id, why))?;
                let mut out = vec![at(links.tree, ObjectType::Tree, 1, None)];
                out.extend(
                    links
                        .parents
                        .into_iter()
                        .map(|p| at(p, ObjectType::Commit, 0, None)),
                );
                Ok(out)
            }
            ObjectType::Tree => {
                if next.depth > self.limits.max_tree_depth {
                    return Err(exceeded(
                        &format!("tree {} nesting", next.id),
                        format!("{} levels", self.limits.max_tree_depth),
                    ));
                }
                let entries = check_tree(data).map_err(|why| refused(next.id, why))?;
                Ok(entries
                    .into_iter()
                    .filter_map(|e| match e.kind {
                        EntryKind::Tree => Some(at(e.id, ObjectType::Tree, next.depth + 1, None)),
                        EntryKind::File | EntryKind::Symlink => {
                            Some(at(e.id, ObjectType::Blob, next.depth, e.special))
                        }
                        EntryKind::Gitlink => None,
                    })
                    .collect())
            }
            ObjectType::Blob => {
                if let Some(file) = next.special {
                    check_special_blob(file, data).map_err(|why| refused(next.id, why))?;
                    self.checked.special.insert((next.id, file));
                }
                Ok(Vec::new())
            }
            other => Err(refused(next.id, format!("a {other} where git allows none"))),
        }
    }
}
