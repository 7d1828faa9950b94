//! Replacing a file whole on the host path so that an interruption leaves nothing: the data
//! goes to an unnamed file (`O_TMPFILE`) in the target's directory, which gets a temporary
//! name (`linkat`) only once complete and is at once renamed over the target. Where the
//! file system has no `O_TMPFILE` the file is named from the start. Either name records
//! its owning process (`temp_names`); a process's first write into a directory sweeps it
//! of those left by a process that died.
//!
//! macOS has no `O_TMPFILE` (nor `AT_EMPTY_PATH`): there the file is named from the start,
//! the path Linux takes on a file system without `O_TMPFILE` (tested here through
//! `replace_file_with`). Nothing on macOS calls this today: its one caller, the
//! container-root path, is Linux's alone.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use container_isolation_agent::temp_names;

#[cfg(target_os = "linux")]
use super::fd_ops::cstr;
use super::fd_ops::{chown_mod, open_at, rename_at, unlink_at};

/// A file being written in `dir`: unnamed, or named `Some(name)`.
struct Pending {
    file: OwnedFd,
    named: Option<CString>,
}

#[cfg(target_os = "linux")]
fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// An unnamed file in `dir` (`O_TMPFILE`).
#[cfg(target_os = "linux")]
fn open_unnamed(dir: RawFd) -> std::io::Result<OwnedFd> {
    open_at(dir, &cstr(".")?, libc::O_TMPFILE | libc::O_WRONLY, 0o600)
}

/// macOS has no unnamed files: `EOPNOTSUPP`, as from a Linux file system without them.
#[cfg(not(target_os = "linux"))]
fn open_unnamed(_dir: RawFd) -> std::io::Result<OwnedFd> {
    Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP))
}

/// An unnamed file in `dir` from `unnamed`, or a named one where it is refused.
fn open_pending(dir: RawFd, unnamed: OpenUnnamed) -> std::io::Result<Pending> {
    match unnamed(dir) {
        Ok(file) => Ok(Pending { file, named: None }),
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
            ) =>
        {
            let name = temp_names::temp_name();
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
            let file = open_at(dir, &name, flags, 0o600)?;
            Ok(Pending {
                file,
                named: Some(name),
            })
        }
        Err(e) => Err(e),
    }
}

/// Gives the unnamed `file` a temporary name in `dir`: by the descriptor where this process
/// may (`CAP_DAC_READ_SEARCH`), else through its `/proc/self/fd` link.
#[cfg(target_os = "linux")]
fn link_unnamed(file: RawFd, dir: RawFd) -> std::io::Result<CString> {
    let name = temp_names::temp_name();
    // SAFETY: links our own open file into the held directory under a fresh name.
    let by_fd =
        check(unsafe { libc::linkat(file, c"".as_ptr(), dir, name.as_ptr(), libc::AT_EMPTY_PATH) });
    match by_fd {
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EPERM)) => {
            let own = cstr(&format!("/proc/self/fd/{file}"))?;
            // SAFETY: as above; the link followed is our own descriptor's.
            check(unsafe {
                libc::linkat(
                    libc::AT_FDCWD,
                    own.as_ptr(),
                    dir,
                    name.as_ptr(),
                    libc::AT_SYMLINK_FOLLOW,
                )
            })?;
        }
        other => other?,
    }
    Ok(name)
}

/// Never reached on macOS, where no file is unnamed.
#[cfg(not(target_os = "linux"))]
fn link_unnamed(_file: RawFd, _dir: RawFd) -> std::io::Result<CString> {
    Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP))
}

/// Writes `content` to a new file in `dir`, owned `uid:gid` with `mode`, and renames it
/// over `name`.
pub fn replace_file(
    dir: RawFd,
    name: &CString,
    content: &[u8],
    uid: u32,
    gid: u32,
    mode: u32,
) -> std::io::Result<()> {
    replace_file_with(dir, name, content, uid, gid, mode, open_unnamed)
}

/// Opens an unnamed file in a directory, or says why not.
type OpenUnnamed = fn(RawFd) -> std::io::Result<OwnedFd>;

/// `replace_file` with the unnamed file's maker given: the seam the macOS path (no unnamed
/// files) is tested through on Linux.
fn replace_file_with(
    dir: RawFd,
    name: &CString,
    content: &[u8],
    uid: u32,
    gid: u32,
    mode: u32,
    unnamed: OpenUnnamed,
) -> std::io::Result<()> {
    temp_names::sweep_once(dir);
    let Pending { file, named } = open_pending(dir, unnamed)?;
    let mut file = std::fs::File::from(file);
    let written = chown_mod(file.as_raw_fd(), uid, gid, mode).and_then(|()| {
        file.write_all(content)?;
        file.flush()
    });
    let temp = match (written, named) {
        (Ok(()), Some(temp)) => temp,
        (Ok(()), None) => link_unnamed(file.as_raw_fd(), dir)?,
        (Err(e), named) => {
            if let Some(temp) = named {
                unlink_at(dir, &temp);
            }
            return Err(e);
        }
    };
    drop(file);
    let renamed = rename_at(dir, &temp, name);
    if renamed.is_err() {
        unlink_at(dir, &temp);
    }
    renamed
}

#[cfg(test)]
mod tests {
    use super::super::fd_ops::cstr;
    use super::*;

    /// What a macOS file system answers for an unnamed file.
    fn no_unnamed_files(_dir: RawFd) -> std::io::Result<OwnedFd> {
        Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP))
    }

    #[test]
    fn a_replaced_file_has_the_new_content_and_mode_and_nothing_else_is_left() {
        replaced_whole(open_unnamed);
    }

    #[test]
    fn without_unnamed_files_as_on_macos_the_named_path_leaves_nothing_either() {
        replaced_whole(no_unnamed_files);
    }

    fn replaced_whole(unnamed: OpenUnnamed) {
        let dir = std::env::temp_dir().join(format!("ci-fr-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("f"), b"old").unwrap();
        let held = std::fs::File::open(&dir).unwrap();
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let name = cstr("f").unwrap();
        replace_file_with(held.as_raw_fd(), &name, b"new", uid, gid, 0o640, unnamed).unwrap();
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["f"]);
        assert_eq!(std::fs::read(dir.join("f")).unwrap(), b"new");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(dir.join("f")).unwrap().permissions(),
        );
        assert_eq!(mode & 0o7777, 0o640);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
