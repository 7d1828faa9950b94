//! A repository the host owns and keeps in memory, for objects made from a clone's work
//! tree without writing into the clone: it reads the clone's object directory (already
//! checked by `open_clone`) as an alternate and writes into a mempack that is gone when
//! it is dropped. It has no config, index, references or work tree of its own.
//!
//! libgit2 "freshens" an object it is asked to write and already has: it touches the file
//! holding it (a loose object, a pack), which would change the clone's files and follow
//! a symlink swapped in there. The alternate's backends have freshening turned off, so
//! libgit2 only asks them whether they have the object.

use git2::{Binding, Odb, Repository};
use libgit2_sys as raw;

use crate::error::{Error, ErrorCode, Result};

/// Above the loose (1) and pack (2) backends, though alternates are never written.
const MEMPACK_PRIORITY: i32 = 1000;

fn no_freshening(odb: &Odb) -> Result<()> {
    // SAFETY: `odb` is a live object database of our own; its backends belong to it and
    // to no other, and stay alive with it.
    unsafe {
        let raw_odb = odb.raw();
        for position in 0..raw::git_odb_num_backends(raw_odb) {
            let mut backend: *mut raw::git_odb_backend = std::ptr::null_mut();
            if raw::git_odb_get_backend(&mut backend, raw_odb, position) < 0 || backend.is_null() {
                return Err(Error::new(
                    ErrorCode::Git,
                    "the clone's objects: a backend could not be read",
                ));
            }
            (*backend).freshen = None;
        }
    }
    Ok(())
}

/// A repository in memory that reads `clone_repo`'s objects and writes only in memory.
pub fn memory_repo(clone_repo: &Repository) -> Result<Repository> {
    let objects = clone_repo.path().join("objects");
    let objects = objects.to_str().ok_or_else(|| {
        Error::new(
            ErrorCode::Git,
            format!("{}: not a UTF-8 path", objects.display()),
        )
    })?;
    let odb = Odb::new().map_err(|e| Error::git("an object database in memory", e))?;
    odb.add_disk_alternate(objects)
        .map_err(|e| Error::git("the clone's objects", e))?;
    no_freshening(&odb)?;
    odb.add_new_mempack_backend(MEMPACK_PRIORITY)
        .map_err(|e| Error::git("an object database in memory", e))?;
    Repository::from_odb(odb).map_err(|e| Error::git("a repository in memory", e))
}
