//! One path of a clone's work tree read as the container left it, never following a
//! symlink on the host: every directory on the way is opened with `O_NOFOLLOW` from the
//! clone's own directory, the last name is looked at with `fstatat(AT_SYMLINK_NOFOLLOW)`,
//! and a file is read through the descriptor checked to be a regular file, at most the
//! size bound; one over the caller's load bound is hashed as it is read, never held.

use std::ffi::CString;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::Oid;
use sha1::{Digest, Sha1};

use super::limits::exceeded;
use crate::error::{Error, ErrorCode, Result};

/// What a work-tree path holds.
#[derive(Debug, PartialEq, Eq)]
pub enum WorktreeEntry {
    /// A regular file: its bytes and whether its owner may execute it.
    File { data: Vec<u8>, executable: bool },
    /// A regular file over the load bound: its blob id (hashed as it was read), its size.
    Hashed {
        id: Oid,
        size: u64,
        executable: bool,
    },
    /// A symlink: its target, stored as git stores one.
    Symlink(Vec<u8>),
    /// Nothing there, or something git does not store (a directory, a FIFO, a device).
    Other,
}

fn io(path: &Path, err: std::io::Error) -> Error {
    Error::new(
        ErrorCode::Git,
        format!("work tree {}: {err}", path.display()),
    )
}

fn c_name(name: &[u8]) -> std::io::Result<CString> {
    CString::new(name).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

fn open_at(dir: Option<&OwnedFd>, name: &CString, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    let at = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: a valid directory descriptor (or AT_FDCWD) and a NUL-terminated name.
    let fd = unsafe {
        libc::openat(
            at,
            name.as_ptr(),
            flags | libc::O_CLOEXEC | libc::O_NOFOLLOW,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just returned this descriptor, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn lstat_at(dir: &OwnedFd, name: &CString) -> std::io::Result<Option<libc::stat>> {
    // SAFETY: plain data, filled by the kernel.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid directory descriptor, a NUL-terminated name, a stat buffer.
    let rc = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    match rc {
        0 => Ok(Some(st)),
        _ => match std::io::Error::last_os_error() {
            e if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
            e => Err(e),
        },
    }
}

fn read_link_at(dir: &OwnedFd, name: &CString) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: a valid directory descriptor, a NUL-terminated name, a buffer of its length.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(buf)
}

/// The clone's work-tree root, opened without following a symlink at its last name.
pub fn open_root(clone: &Path) -> Result<OwnedFd> {
    let name = c_name(clone.as_os_str().as_bytes()).map_err(|e| io(clone, e))?;
    open_at(None, &name, libc::O_RDONLY | libc::O_DIRECTORY).map_err(|e| io(clone, e))
}

/// How much of a file is read: over `max` refused, over `load` hashed only.
#[derive(Debug, Clone, Copy)]
pub struct ReadBounds {
    pub max: u64,
    pub load: u64,
}

/// The entry at `relative` (slash-separated, as git lists it) under `root`.
pub fn read_entry(root: &OwnedFd, relative: &str, bounds: ReadBounds) -> Result<WorktreeEntry> {
    let path = Path::new(relative);
    let mut parts: Vec<&[u8]> = relative.split('/').map(str::as_bytes).collect();
    let last = parts
        .pop()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| io(path, std::io::Error::from_raw_os_error(libc::EINVAL)))?;
    let mut dir: Option<OwnedFd> = None;
    for part in parts {
        if part.is_empty() || part == b"." || part == b".." {
            return Err(io(path, std::io::Error::from_raw_os_error(libc::EINVAL)));
        }
        let name = c_name(part).map_err(|e| io(path, e))?;
        let parent = dir.as_ref().unwrap_or(root);
        match open_at(Some(parent), &name, libc::O_RDONLY | libc::O_DIRECTORY) {
            Ok(fd) => dir = Some(fd),
            // A symlink or a file where a directory was: no file of git's there.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)
                ) =>
            {
                return Ok(WorktreeEntry::Other)
            }
            Err(e) => return Err(io(path, e)),
        }
    }
    let dir = dir.as_ref().unwrap_or(root);
    let name = c_name(last).map_err(|e| io(path, e))?;
    let Some(st) = lstat_at(dir, &name).map_err(|e| io(path, e))? else {
        return Ok(WorktreeEntry::Other);
    };
    match st.st_mode & libc::S_IFMT {
        libc::S_IFLNK => Ok(WorktreeEntry::Symlink(
            read_link_at(dir, &name).map_err(|e| io(path, e))?,
        )),
        libc::S_IFREG => read_file(dir, &name, path, bounds),
        _ => Ok(WorktreeEntry::Other),
    }
}

fn read_file(
    dir: &OwnedFd,
    name: &CString,
    path: &Path,
    bounds: ReadBounds,
) -> Result<WorktreeEntry> {
    // O_NONBLOCK: a FIFO swapped in after the look is not waited on.
    let fd =
        open_at(Some(dir), name, libc::O_RDONLY | libc::O_NONBLOCK).map_err(|e| io(path, e))?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(|e| io(path, e))?;
    if !meta.is_file() {
        return Ok(WorktreeEntry::Other);
    }
    let max = bounds.max;
    if meta.len() > max {
        return Err(exceeded(
            &format!("work-tree file {} ({} bytes)", path.display(), meta.len()),
            format!("{max} bytes"),
        ));
    }
    use std::os::unix::fs::PermissionsExt;
    let executable = meta.permissions().mode() & 0o100 != 0;
    if meta.len() > bounds.load {
        return hashed(file, path, meta.len(), executable);
    }
    let mut data = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut data)
        .map_err(|e| io(path, e))?;
    if data.len() as u64 > max {
        return Err(exceeded(
            &format!("work-tree file {}", path.display()),
            format!("{max} bytes"),
        ));
    }
    Ok(WorktreeEntry::File { data, executable })
}

/// The blob id of the `size` bytes `file` holds, read a piece at a time; `GIT` when the
/// file grows or shrinks meanwhile.
fn hashed(mut file: File, path: &Path, size: u64, executable: bool) -> Result<WorktreeEntry> {
    let changed = || {
        Error::new(
            ErrorCode::Git,
            format!("work tree {}: changed while it was read", path.display()),
        )
    };
    let mut hasher = Sha1::new();
    hasher.update(format!("blob {size}\0").as_bytes());
    let mut buf = vec![0u8; 1 << 16];
    let mut left = size;
    loop {
        let room = buf
            .len()
            .min(usize::try_from(left + 1).unwrap_or(usize::MAX));
        let n = file.read(&mut buf[..room]).map_err(|e| io(path, e))?;
        if n == 0 {
            break;
        }
        left = left.checked_sub(n as u64).ok_or_else(changed)?;
        hasher.update(&buf[..n]);
    }
    if left != 0 {
        return Err(changed());
    }
    let id = Oid::from_bytes(&hasher.finalize()).map_err(|e| Error::git("a blob id", e))?;
    Ok(WorktreeEntry::Hashed {
        id,
        size,
        executable,
    })
}
