//! Files written into and removed from a clone's work tree, which the session controls,
//! never following a symlink there: every directory on the way is opened from the clone's
//! root with `O_NOFOLLOW` (a symlink or file in the way of a directory is removed and a
//! directory made), and the last name is replaced by renaming a file (or symlink) made
//! beside it under a temporary name over it, so whatever stood there is unlinked, never
//! written through. A directory in the way of a file is removed whole, descriptor by
//! descriptor.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use crate::error::{Error, ErrorCode, Result};
use crate::fileio::fd_ops::{
    entry_names, errno, file_type, lstat_at, mkdir_at, open_at, rename_at,
};

/// What a path becomes.
pub enum NewEntry<'a> {
    File { data: &'a [u8], executable: bool },
    Symlink { target: &'a [u8] },
}

fn io(path: &[u8], err: std::io::Error) -> Error {
    Error::new(
        ErrorCode::Git,
        format!("work tree {}: {err}", String::from_utf8_lossy(path)),
    )
}

fn c_name(name: &[u8]) -> std::io::Result<CString> {
    CString::new(name).map_err(|_| errno(libc::EINVAL))
}

fn unlink(dir: RawFd, name: &CString, flags: libc::c_int) -> std::io::Result<()> {
    // SAFETY: one name inside a held directory.
    match unsafe { libc::unlinkat(dir, name.as_ptr(), flags) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

fn open_dir(dir: RawFd, name: &CString) -> std::io::Result<OwnedFd> {
    open_at(dir, name, libc::O_RDONLY | libc::O_DIRECTORY, 0)
}

/// A path's components, refused when one could leave the work tree or reach `.git`.
fn components(path: &[u8]) -> Result<Vec<CString>> {
    let parts: Vec<&[u8]> = path.split(|b| *b == b'/').collect();
    let bad = |p: &[u8]| p.is_empty() || p == b"." || p == b".." || p.eq_ignore_ascii_case(b".git");
    if parts.iter().any(|p| bad(p)) {
        return Err(Error::new(
            ErrorCode::Git,
            format!("work tree path {:?} refused", String::from_utf8_lossy(path)),
        ));
    }
    parts
        .into_iter()
        .map(|p| c_name(p).map_err(|e| io(path, e)))
        .collect()
}

/// Removes `name` in `dir` whatever it is; a directory with everything in it.
fn remove_any(dir: RawFd, name: &CString, depth: usize) -> std::io::Result<()> {
    let st = match lstat_at(dir, name) {
        Ok(st) => st,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(()),
        Err(e) => return Err(e),
    };
    if file_type(&st) != libc::S_IFDIR {
        return unlink(dir, name, 0);
    }
    if depth > 4096 {
        return Err(errno(libc::ELOOP));
    }
    let inner = open_dir(dir, name)?;
    for child in entry_names(&inner)? {
        remove_any(inner.as_raw_fd(), &child, depth + 1)?;
    }
    unlink(dir, name, libc::AT_REMOVEDIR)
}

/// The clone's work tree, held open.
pub struct WorktreeWriter {
    root: OwnedFd,
}

impl WorktreeWriter {
    pub fn open(clone: &std::path::Path) -> Result<WorktreeWriter> {
        use std::os::unix::ffi::OsStrExt;
        let bytes = clone.as_os_str().as_bytes();
        let name = c_name(bytes).map_err(|e| io(bytes, e))?;
        let root = open_dir(libc::AT_FDCWD, &name).map_err(|e| io(bytes, e))?;
        Ok(WorktreeWriter { root })
    }

    /// The directories leading to `parts`' last name, made (and cleared of what stands in
    /// their way) when `make`; `None` when one is missing and not `make`.
    fn parents(&self, path: &[u8], parts: &[CString], make: bool) -> Result<Option<Vec<OwnedFd>>> {
        let mut chain: Vec<OwnedFd> = Vec::new();
        for part in &parts[..parts.len() - 1] {
            let at = chain.last().unwrap_or(&self.root).as_raw_fd();
            let opened = match open_dir(at, part) {
                Ok(fd) => fd,
                Err(e) if !make => match e.raw_os_error() {
                    Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP) => return Ok(None),
                    _ => return Err(io(path, e)),
                },
                Err(e) => {
                    if e.raw_os_error() != Some(libc::ENOENT) {
                        // A file or symlink where a directory goes.
                        remove_any(at, part, 0).map_err(|e| io(path, e))?;
                    }
                    mkdir_at(at, part, 0o755).map_err(|e| io(path, e))?;
                    open_dir(at, part).map_err(|e| io(path, e))?
                }
            };
            chain.push(opened);
        }
        Ok(Some(chain))
    }

    /// Writes `entry` at `path` (slash-separated, as git names it).
    pub fn write(&self, path: &[u8], entry: NewEntry) -> Result<()> {
        let parts = components(path)?;
        let chain = self.parents(path, &parts, true)?.unwrap_or_default();
        let dir = chain.last().unwrap_or(&self.root).as_raw_fd();
        let name = parts.last().expect("a path has a last name");
        let mut temp = b".ci-restore-".to_vec();
        temp.extend_from_slice(uuid::Uuid::new_v4().simple().to_string().as_bytes());
        let temp = c_name(&temp).map_err(|e| io(path, e))?;
        let made = match entry {
            NewEntry::File { data, executable } => make_file(dir, &temp, data, executable),
            NewEntry::Symlink { target } => make_symlink(dir, &temp, target),
        };
        let placed = made.and_then(|_| {
            let st = lstat_at(dir, name);
            if st.is_ok_and(|st| file_type(&st) == libc::S_IFDIR) {
                remove_any(dir, name, 0)?;
            }
            rename_at(dir, &temp, name)
        });
        if let Err(e) = placed {
            let _ = unlink(dir, &temp, 0);
            return Err(io(path, e));
        }
        Ok(())
    }

    /// Removes whatever is at `path`, then the directories above it left empty; `false`
    /// when nothing was there.
    pub fn remove(&self, path: &[u8]) -> Result<bool> {
        let parts = components(path)?;
        let Some(chain) = self.parents(path, &parts, false)? else {
            return Ok(false);
        };
        let dir = chain.last().unwrap_or(&self.root).as_raw_fd();
        let name = parts.last().expect("a path has a last name");
        if lstat_at(dir, name).is_err() {
            return Ok(false);
        }
        remove_any(dir, name, 0).map_err(|e| io(path, e))?;
        for depth in (0..chain.len()).rev() {
            let above = match depth {
                0 => self.root.as_raw_fd(),
                n => chain[n - 1].as_raw_fd(),
            };
            if unlink(above, &parts[depth], libc::AT_REMOVEDIR).is_err() {
                break;
            }
        }
        Ok(true)
    }
}

fn make_file(dir: RawFd, name: &CString, data: &[u8], executable: bool) -> std::io::Result<()> {
    let mode = if executable { 0o755 } else { 0o644 };
    let fd = open_at(
        dir,
        name,
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL,
        mode,
    )?;
    // SAFETY: a descriptor just opened, owned here.
    let fd = unsafe { libc::fchmod(fd.as_raw_fd(), mode as libc::mode_t) }
        .eq(&0)
        .then_some(fd)
        .ok_or_else(std::io::Error::last_os_error)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(data)
}

fn make_symlink(dir: RawFd, name: &CString, target: &[u8]) -> std::io::Result<()> {
    let target = c_name(target)?;
    // SAFETY: a NUL-terminated target and name inside a held directory.
    match unsafe { libc::symlinkat(target.as_ptr(), dir, name.as_ptr()) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch_dir::Scratch;

    fn file(data: &[u8]) -> NewEntry<'_> {
        NewEntry::File {
            data,
            executable: false,
        }
    }

    #[test]
    fn a_directory_in_the_way_goes_whole_and_what_its_links_name_stays() {
        let scratch = Scratch::new("cp-write");
        let (tree, outside) = (scratch.path("tree"), scratch.path("outside"));
        std::fs::create_dir_all(tree.join("d/inner")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("keep"), "outside").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("d/inner/link")).unwrap();
        std::os::unix::fs::symlink(outside.join("keep"), tree.join("d/file")).unwrap();
        let writer = WorktreeWriter::open(&tree).unwrap();
        writer.write(b"d", file(b"now a file")).unwrap();
        assert_eq!(std::fs::read(tree.join("d")).unwrap(), b"now a file");
        assert_eq!(std::fs::read(outside.join("keep")).unwrap(), b"outside");
        assert_eq!(
            std::fs::read_dir(&tree).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn nothing_is_removed_or_written_through_a_symlinked_folder() {
        let scratch = Scratch::new("cp-write-link");
        let (tree, outside) = (scratch.path("tree"), scratch.path("outside"));
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("f"), "outside").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("d")).unwrap();
        let writer = WorktreeWriter::open(&tree).unwrap();
        assert!(!writer.remove(b"d/f").unwrap());
        writer.write(b"d/f", file(b"inside")).unwrap();
        assert_eq!(std::fs::read(outside.join("f")).unwrap(), b"outside");
        assert!(std::fs::symlink_metadata(tree.join("d")).unwrap().is_dir());
        assert_eq!(std::fs::read(tree.join("d/f")).unwrap(), b"inside");
        assert!(writer.remove(b"d/f").unwrap());
        assert!(!tree.join("d").exists(), "the folder left empty went too");
        for bad in [&b"../x"[..], b"a/.git/config", b"a//b", b"/abs"] {
            assert!(writer.write(bad, file(b"x")).is_err(), "{bad:?}");
        }
    }
}
