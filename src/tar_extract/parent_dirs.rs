//! The directory an entry goes into, opened one component at a time below the target's
//! descriptor with `O_NOFOLLOW | O_DIRECTORY`: a component that is a symlink (or anything
//! but a directory) refuses the entry; a missing one is made.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};

use crate::fileio::fd_ops::{mkdir_at, open_at};

/// Opens (making what is missing) the directories `parents` below `root`.
pub fn open_parents(root: &OwnedFd, parents: &[CString]) -> std::io::Result<Option<OwnedFd>> {
    let mut current: Option<OwnedFd> = None;
    for name in parents {
        let dir = current.as_ref().unwrap_or(root).as_raw_fd();
        let next = match open_dir(dir, name) {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                mkdir_at(dir, name, 0o755)?;
                open_dir(dir, name)?
            }
            other => other?,
        };
        current = Some(next);
    }
    Ok(current)
}

pub fn open_dir(dir: i32, name: &CString) -> std::io::Result<OwnedFd> {
    open_at(dir, name, libc::O_RDONLY | libc::O_DIRECTORY, 0)
}
