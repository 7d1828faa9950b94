//! Blobs an object database knows by id and size only, never by content: an object
//! database backend that answers "exists" and the header (a blob, its size) for the ids
//! it is told, and nothing else. libgit2 then accepts them in a tree it builds and a diff
//! sizes them without loading them; reading one fails as for a missing object.

use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::{Arc, Mutex};

use git2::{Binding, Odb, Oid};
use libgit2_sys as raw;

use crate::error::{Error, ErrorCode, Result};

/// The blobs known, by id, with the size to report for each.
pub type Unloaded = Arc<Mutex<HashMap<Oid, u64>>>;

/// libgit2's backend first (it is handed a pointer to it), then what it answers from.
#[repr(C)]
struct Backend {
    parent: raw::git_odb_backend,
    known: Unloaded,
}

/// The size of `id`, if the backend behind `backend` knows it.
///
/// SAFETY: `backend` is a `Backend` made by `add_unloaded_blobs`, `id` a valid oid.
unsafe fn size_of(backend: *mut raw::git_odb_backend, id: *const raw::git_oid) -> Option<u64> {
    let backend = &*(backend as *const Backend);
    let id = Oid::from_raw(id);
    backend.known.lock().ok()?.get(&id).copied()
}

extern "C" fn read_header(
    len: *mut libc::size_t,
    kind: *mut raw::git_object_t,
    backend: *mut raw::git_odb_backend,
    id: *const raw::git_oid,
) -> c_int {
    // SAFETY: libgit2 calls with this backend, a valid oid and valid out pointers.
    unsafe {
        match size_of(backend, id) {
            Some(size) => {
                *len = usize::try_from(size).unwrap_or(usize::MAX);
                *kind = raw::GIT_OBJECT_BLOB;
                0
            }
            None => raw::GIT_ENOTFOUND,
        }
    }
}

extern "C" fn exists(backend: *mut raw::git_odb_backend, id: *const raw::git_oid) -> c_int {
    // SAFETY: as in `read_header`.
    c_int::from(unsafe { size_of(backend, id) }.is_some())
}

extern "C" fn free(backend: *mut raw::git_odb_backend) {
    // SAFETY: the object database frees its backend once, and this one was a `Box`.
    drop(unsafe { Box::from_raw(backend as *mut Backend) });
}

/// Adds to `odb` a backend that knows the blobs put in the map returned.
pub fn add_unloaded_blobs(odb: &Odb, priority: i32) -> Result<Unloaded> {
    let known = Unloaded::default();
    let failed = || Error::new(ErrorCode::Git, "an object database backend in memory");
    let backend = Box::new(Backend {
        // SAFETY: a C struct of a version number, pointers and nullable function
        // pointers, for which all zeroes is valid (no function, no database).
        parent: unsafe { std::mem::zeroed() },
        known: known.clone(),
    });
    let backend = Box::into_raw(backend);
    // SAFETY: `backend` is a live `Backend`; once added, `odb` owns it and frees it
    // through `free`; if adding fails, it is freed here.
    unsafe {
        if raw::git_odb_init_backend(&mut (*backend).parent, raw::GIT_ODB_BACKEND_VERSION) < 0 {
            drop(Box::from_raw(backend));
            return Err(failed());
        }
        (*backend).parent.read_header = Some(read_header);
        (*backend).parent.exists = Some(exists);
        (*backend).parent.free = Some(free);
        if raw::git_odb_add_backend(odb.raw(), backend.cast(), priority) < 0 {
            drop(Box::from_raw(backend));
            return Err(failed());
        }
    }
    Ok(known)
}
