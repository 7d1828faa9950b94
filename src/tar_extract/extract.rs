//! The extraction loop: each entry's name checked, its parent opened without following
//! anything, then a directory made, a regular file written (`O_CREAT | O_EXCL`, within the
//! byte bound) or a symlink made as a link. Hard links, devices and fifos are skipped.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use tar::EntryType;

use super::entry_path::{entry_components, Refused};
use super::parent_dirs::{open_dir, open_parents};
use crate::error::{Error, ErrorCode, Result};
use crate::fileio::fd_ops::{cstr, errno, lstat_at, mkdir_at, open_at, unlink_at};

/// What one extraction may write at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtractLimits {
    pub max_bytes: u64,
    pub max_entries: usize,
}

impl Default for ExtractLimits {
    fn default() -> Self {
        ExtractLimits {
            max_bytes: 8 << 30,
            max_entries: 1_000_000,
        }
    }
}

/// What was written, and what was left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    pub files: usize,
    pub dirs: usize,
    pub symlinks: usize,
    pub bytes: u64,
    /// Hard links, devices, fifos: not written.
    pub skipped: usize,
}

fn refused(name: &Path, why: &str) -> Error {
    Error::new(
        ErrorCode::Eacces,
        format!("archive entry {}: refused: {why}", name.display()),
    )
}

fn io(name: &Path, err: std::io::Error) -> Error {
    match err.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) => {
            refused(name, "a parent directory is a symlink or not a directory")
        }
        _ => Error::new(
            ErrorCode::Eacces,
            format!("archive entry {}: {err}", name.display()),
        ),
    }
}

fn exceeded(what: &str, bound: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::LimitExceeded,
        format!("archive: more than {bound} {what}"),
    )
}

/// Writes the entries of `archive` below the existing directory `target`, the first
/// `strip` components of each name dropped.
pub fn extract(
    archive: impl Read,
    target: &Path,
    strip: usize,
    limits: ExtractLimits,
) -> Result<Extracted> {
    let target_name = cstr(&target.to_string_lossy()).map_err(|e| io(target, e))?;
    let root = open_dir(libc::AT_FDCWD, &target_name).map_err(|e| io(target, e))?;
    let mut archive = tar::Archive::new(archive);
    let mut done = Extracted::default();
    let mut entries_seen = 0usize;
    let corrupt =
        |e: std::io::Error| Error::new(ErrorCode::EngineError, format!("archive: malformed ({e})"));
    for entry in archive.entries().map_err(corrupt)? {
        let mut entry = entry.map_err(corrupt)?;
        entries_seen += 1;
        if entries_seen > limits.max_entries {
            return Err(exceeded("entries", limits.max_entries));
        }
        let name = entry.path().map_err(corrupt)?.into_owned();
        let parts = entry_components(&name, strip).map_err(|why| match why {
            Refused::Absolute => refused(&name, "an absolute path"),
            Refused::ParentDir => refused(&name, "a `..` component"),
            Refused::Nul => refused(&name, "a NUL byte"),
        })?;
        let Some((last, parents)) = parts.split_last() else {
            continue;
        };
        let kind = entry.header().entry_type();
        if !matches!(
            kind,
            EntryType::Regular | EntryType::Continuous | EntryType::Directory | EntryType::Symlink
        ) {
            done.skipped += 1;
            continue;
        }
        let parent = open_parents(&root, parents).map_err(|e| io(&name, e))?;
        let dir = parent.as_ref().unwrap_or(&root);
        let mode = entry.header().mode().unwrap_or(0o644) & 0o777;
        match kind {
            EntryType::Directory => {
                make_dir(dir, last, mode).map_err(|e| io(&name, e))?;
                done.dirs += 1;
            }
            EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(corrupt)?
                    .ok_or_else(|| refused(&name, "a symlink without a target"))?;
                make_symlink(dir, last, &target).map_err(|e| io(&name, e))?;
                done.symlinks += 1;
            }
            _ => {
                let size = entry.header().size().map_err(corrupt)?;
                if done.bytes.saturating_add(size) > limits.max_bytes {
                    return Err(exceeded("bytes", limits.max_bytes));
                }
                let file = create_file(dir, last, mode).map_err(|e| io(&name, e))?;
                let copied = copy_bounded(&mut entry, file, size).map_err(|e| io(&name, e))?;
                done.bytes += copied;
                done.files += 1;
            }
        }
    }
    Ok(done)
}

/// A directory made, or one already there kept (anything else there is refused).
fn make_dir(dir: &OwnedFd, name: &CString, mode: u32) -> std::io::Result<()> {
    match mkdir_at(dir.as_raw_fd(), name, (mode | 0o700) as libc::mode_t) {
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {
            let st = lstat_at(dir.as_raw_fd(), name)?;
            match st.st_mode & libc::S_IFMT == libc::S_IFDIR {
                true => Ok(()),
                false => Err(errno(libc::ENOTDIR)),
            }
        }
        other => other,
    }
}

/// Replaces a file or link of the same name (a later entry wins, as tar does); never a
/// directory.
fn clear_name(dir: &OwnedFd, name: &CString) -> std::io::Result<()> {
    match lstat_at(dir.as_raw_fd(), name) {
        Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => Err(errno(libc::EISDIR)),
        Ok(_) => {
            unlink_at(dir.as_raw_fd(), name);
            Ok(())
        }
        Err(_) => Ok(()),
    }
}

fn make_symlink(dir: &OwnedFd, name: &CString, target: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    clear_name(dir, name)?;
    let target = CString::new(target.as_os_str().as_bytes()).map_err(|_| errno(libc::EINVAL))?;
    // SAFETY: NUL-terminated strings and a valid directory descriptor; the link is made,
    // never followed.
    let rc = unsafe { libc::symlinkat(target.as_ptr(), dir.as_raw_fd(), name.as_ptr()) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn create_file(dir: &OwnedFd, name: &CString, mode: u32) -> std::io::Result<std::fs::File> {
    clear_name(dir, name)?;
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
    let fd = open_at(dir.as_raw_fd(), name, flags, mode | 0o600)?;
    Ok(std::fs::File::from(fd))
}

/// Copies no more than the header's `size` bytes.
fn copy_bounded(entry: &mut impl Read, mut file: std::fs::File, size: u64) -> std::io::Result<u64> {
    let copied = std::io::copy(&mut entry.take(size), &mut file)?;
    file.flush()?;
    Ok(copied)
}
