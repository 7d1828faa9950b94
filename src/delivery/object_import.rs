//! Objects of a hostile clone brought into a repository the host owns: those the target
//! lacks, found and checked by the `object_walk` before anything is written, so a refused
//! import leaves the target as it was; then they go in as one pack.

use git2::{Odb, Oid};

use super::limits::{Deadline, Limits};
use super::object_walk::{refused, Checked, NewObject, ObjectWalk};
use super::pack_file::PackFile;
use crate::error::Result;

/// What an import copied, and what it checked (for a later walk over the same objects).
pub struct Imported {
    pub objects: usize,
    pub checked: Checked,
}

/// Copies every object reachable from `tip` (a commit) in `source` that `target` lacks.
/// Checked whole before the first write.
pub fn import_objects(
    source: &Odb,
    target: &Odb,
    tip: Oid,
    limits: &Limits,
    deadline: Deadline,
) -> Result<Imported> {
    let mut walk = ObjectWalk::new(source, target, limits, deadline, Checked::default());
    walk.run(tip)?;
    let ObjectWalk { found, checked, .. } = walk;
    if !found.is_empty() {
        write_pack(source, target, &found, deadline)?;
    }
    Ok(Imported {
        objects: found.len(),
        checked,
    })
}

fn write_pack(source: &Odb, target: &Odb, found: &[NewObject], deadline: Deadline) -> Result<()> {
    let mut pack = PackFile::new(target, found.len())?;
    for (n, object) in found.iter().enumerate() {
        if n.is_multiple_of(256) {
            deadline.check("writing the session's objects")?;
        }
        match &object.data {
            Some(data) => pack.add(object.kind, data)?,
            None => {
                let read = source
                    .read(object.id)
                    .map_err(|e| refused(object.id, e.message()))?;
                if read.kind() != object.kind
                    || Oid::hash_object(object.kind, read.data()).ok() != Some(object.id)
                {
                    return Err(refused(object.id, "it changed while it was copied"));
                }
                pack.add(object.kind, read.data())?
            }
        }
    }
    pack.finish()
}
