//! Gives a session clone (which this library made) to the remote user's uid:gid, so that a
//! `remoteUser` other than the host's user can write it when the host runs as root. The
//! container may be writing the clone meanwhile, so the walk holds each directory open and
//! works on names inside it: nothing is followed, a symlink is changed itself (`lchown`
//! semantics), and a directory swapped for a symlink mid-walk is skipped.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Directories deeper than this are left as they are.
const MAX_DEPTH: usize = 256;

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn open_dir_at(dir: libc::c_int, name: &CString) -> io::Result<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: a valid C string and flags; the returned descriptor is owned below.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags) };
    check(fd)?;
    // SAFETY: `fd` was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The names in `dir`, listed through its `/proc/self/fd` link.
#[cfg(target_os = "linux")]
fn entry_names(dir: &OwnedFd) -> io::Result<Vec<CString>> {
    let listing = std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))?;
    let mut names = Vec::new();
    for entry in listing {
        let name = entry?.file_name();
        names.push(CString::new(name.as_bytes()).map_err(io::Error::other)?);
    }
    Ok(names)
}

/// macOS has no `/proc`: the held directory is listed itself.
#[cfg(not(target_os = "linux"))]
fn entry_names(dir: &OwnedFd) -> io::Result<Vec<CString>> {
    crate::fileio::fd_ops::entry_names(dir)
}

fn walk(dir: &OwnedFd, uid: u32, gid: u32, depth: usize, changed: &mut u64) -> io::Result<()> {
    // SAFETY: `dir` is an open descriptor.
    check(unsafe { libc::fchown(dir.as_raw_fd(), uid, gid) })?;
    *changed += 1;
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    for name in entry_names(dir)? {
        match open_dir_at(dir.as_raw_fd(), &name) {
            Ok(child) => walk(&child, uid, gid, depth + 1, changed)?,
            // Not a directory (or a symlink to one): the entry itself, never its target.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOTDIR) | Some(libc::ELOOP)) => {
                // SAFETY: a valid descriptor and C string.
                let ret = unsafe {
                    libc::fchownat(
                        dir.as_raw_fd(),
                        name.as_ptr(),
                        uid,
                        gid,
                        libc::AT_SYMLINK_NOFOLLOW,
                    )
                };
                match check(ret) {
                    Ok(()) => *changed += 1,
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                    Err(e) => return Err(e),
                }
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Every entry under `root` (a directory, itself not followed) to `uid:gid`; how many.
pub fn give_clone(root: &Path, uid: u32, gid: u32) -> io::Result<u64> {
    let path = CString::new(root.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let dir = open_dir_at(libc::AT_FDCWD, &path)?;
    let mut changed = 0;
    walk(&dir, uid, gid, 0, &mut changed)?;
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn the_listing_macos_uses_names_what_linux_lists() {
        let root = std::env::temp_dir().join(format!("ci-co-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::write(root.join("f"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("link")).unwrap();
        let path = CString::new(root.as_os_str().as_bytes()).unwrap();
        let dir = open_dir_at(libc::AT_FDCWD, &path).unwrap();
        let sorted = |mut names: Vec<CString>| {
            names.sort();
            names
        };
        let listed = sorted(crate::fileio::fd_ops::entry_names(&dir).unwrap());
        assert_eq!(listed, sorted(entry_names(&dir).unwrap()));
        assert_eq!(listed, [c"a", c"f", c"link"].map(CString::from));
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn everything_inside_changes_and_nothing_a_symlink_points_to() {
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let root = std::env::temp_dir().join(format!("ci-co-{}", uuid::Uuid::new_v4()));
        let outside = root.with_extension("outside");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("a/b/f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let changed = give_clone(&root, 1000, 1001).unwrap();
        assert_eq!(changed, 5);
        for p in ["", "a", "a/b", "a/b/f"] {
            let meta = std::fs::symlink_metadata(root.join(p)).unwrap();
            assert_eq!((meta.uid(), meta.gid()), (1000, 1001), "{p}");
        }
        assert_eq!(
            std::fs::symlink_metadata(root.join("link")).unwrap().uid(),
            1000
        );
        assert_eq!(std::fs::metadata(&outside).unwrap().uid(), 0);
        std::fs::remove_dir_all(&root).unwrap();
        std::fs::remove_dir_all(&outside).unwrap();
    }
}
