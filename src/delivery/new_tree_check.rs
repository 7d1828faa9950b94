//! The trees a work tree's snapshot adds to HEAD's, checked as export's walk checks the
//! snapshot before it leaves (`git_fsck`: entry names, modes, order, every spelling of
//! `.git`; the contents of `.gitmodules` and `.gitattributes`; the nesting bound): a tree
//! the clone already has is not descended, as export does not descend what it imported.

use git2::{ObjectType, Odb, Oid};

use super::limits::{exceeded, Deadline, Limits};
use super::object_walk::refused;
use crate::error::{Error, Result};
use crate::git_fsck::{check_special_blob, check_tree, EntryKind};

fn read(odb: &Odb, id: Oid, kind: ObjectType) -> Result<Vec<u8>> {
    let object = odb
        .read(id)
        .map_err(|e| Error::git(&format!("object {id}"), e))?;
    if object.kind() != kind {
        return Err(refused(
            id,
            format!("it is a {}, not a {kind}", object.kind()),
        ));
    }
    Ok(object.data().to_vec())
}

/// Checks every tree under `root` that `clone` lacks, reading it from `made`, and the dot
/// files git parses that they name and `clone` lacks.
pub fn check_new_trees(
    made: &Odb,
    clone: &Odb,
    root: Oid,
    limits: &Limits,
    deadline: Deadline,
) -> Result<()> {
    let mut stack = vec![(root, 1usize)];
    while let Some((id, depth)) = stack.pop() {
        deadline.check("checking the work tree's snapshot")?;
        if clone.exists(id) {
            continue;
        }
        if depth > limits.max_tree_depth {
            return Err(exceeded(
                &format!("tree {id} nesting"),
                format!("{} levels", limits.max_tree_depth),
            ));
        }
        let data = read(made, id, ObjectType::Tree)?;
        for entry in check_tree(&data).map_err(|why| refused(id, why))? {
            match (entry.kind, entry.special) {
                (EntryKind::Tree, _) => stack.push((entry.id, depth + 1)),
                (EntryKind::File, Some(file)) if !clone.exists(entry.id) => {
                    let blob = read(made, entry.id, ObjectType::Blob)?;
                    check_special_blob(file, &blob).map_err(|why| refused(entry.id, why))?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}
