//! A host folder read without writing to it and without following a symlink below it:
//! each directory is held open and everything in it is reached by name from that
//! descriptor (`O_NOFOLLOW`), an entry's kind comes from `fstatat(AT_SYMLINK_NOFOLLOW)`
//! before anything is opened (a FIFO, socket or device is never opened), and a regular
//! file is opened so that what is read is the file that was looked at: on Linux through
//! an `O_PATH` descriptor checked with `fstat` and reopened, elsewhere with `O_NONBLOCK`
//! and checked after. Reads ask not to update access times where the kernel allows it.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What a directory entry is, as git would store it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Directory,
    File,
    Symlink,
    /// A FIFO, socket or device: not stored, never opened.
    Other,
}

/// A regular file, opened for reading.
pub struct OpenedFile {
    pub file: File,
    pub executable: bool,
}

/// An open directory of the folder.
pub struct FolderDir {
    fd: OwnedFd,
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn open_at(dir: libc::c_int, name: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: a valid directory descriptor (or AT_FDCWD) and a NUL-terminated name.
    let fd = check(unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC) })?;
    // SAFETY: the kernel just returned this descriptor, owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: &OwnedFd) -> io::Result<libc::stat> {
    // SAFETY: plain data, filled by the kernel.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: an open descriptor and a stat buffer.
    check(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) })?;
    Ok(st)
}

fn kind_of(mode: libc::mode_t) -> EntryKind {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => EntryKind::Directory,
        libc::S_IFREG => EntryKind::File,
        libc::S_IFLNK => EntryKind::Symlink,
        _ => EntryKind::Other,
    }
}

/// `flags` with `O_NOATIME` where there is one; `open` retries without it when the kernel
/// allows it only to the file's owner.
fn open_reading(open: impl Fn(libc::c_int) -> io::Result<OwnedFd>) -> io::Result<OwnedFd> {
    #[cfg(target_os = "linux")]
    match open(libc::O_RDONLY | libc::O_NOATIME) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => {}
        other => return other,
    }
    open(libc::O_RDONLY)
}

impl FolderDir {
    /// The folder itself (its path is the host's, so a symlink in it is followed).
    pub fn open(path: &Path) -> io::Result<FolderDir> {
        let name = CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
        let fd = open_reading(|flags| open_at(libc::AT_FDCWD, &name, flags | libc::O_DIRECTORY))?;
        Ok(FolderDir { fd })
    }

    /// A directory in it; `None` when the name no longer is one (it changed meanwhile).
    pub fn child(&self, name: &CStr) -> io::Result<Option<FolderDir>> {
        let flags = libc::O_DIRECTORY | libc::O_NOFOLLOW;
        match open_reading(|f| open_at(self.fd.as_raw_fd(), name, f | flags)) {
            Ok(fd) => Ok(Some(FolderDir { fd })),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The names in it, without `.` and `..`, sorted bytewise.
    pub fn names(&self) -> io::Result<Vec<CString>> {
        // SAFETY: duplicating an open descriptor; the copy is owned by the DIR stream below.
        let copy = check(unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) })?;
        // SAFETY: `copy` is an open directory descriptor handed over to the stream.
        let stream = unsafe { libc::fdopendir(copy) };
        if stream.is_null() {
            let err = io::Error::last_os_error();
            // SAFETY: fdopendir failed, so `copy` is still ours to close.
            unsafe { libc::close(copy) };
            return Err(err);
        }
        // A listing reads from the descriptor's offset: start at the beginning.
        // SAFETY: a valid stream.
        unsafe { libc::rewinddir(stream) };
        let mut names = Vec::new();
        let result = loop {
            // SAFETY: errno is thread-local; cleared to tell the end from an error.
            unsafe { *errno_location() = 0 };
            // SAFETY: a valid stream; the entry stays valid until the next readdir.
            let entry = unsafe { libc::readdir(stream) };
            if entry.is_null() {
                let errno = io::Error::last_os_error();
                break match errno.raw_os_error() {
                    Some(0) | None => Ok(()),
                    _ => Err(errno),
                };
            }
            // SAFETY: d_name is NUL-terminated within the entry.
            let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
            if name.to_bytes() != b"." && name.to_bytes() != b".." {
                names.push(name.to_owned());
            }
        };
        // SAFETY: the stream (and with it `copy`) is closed once.
        unsafe { libc::closedir(stream) };
        result?;
        names.sort();
        Ok(names)
    }

    /// What `name` is, not following a symlink; `None` when it is gone.
    pub fn kind(&self, name: &CStr) -> io::Result<Option<EntryKind>> {
        // SAFETY: plain data, filled by the kernel.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: an open directory descriptor, a NUL-terminated name, a stat buffer.
        let rc = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                name.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        match check(rc) {
            Ok(_) => Ok(Some(kind_of(st.st_mode))),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A symlink's target, as its bytes (at most `PATH_MAX`).
    pub fn read_link(&self, name: &CStr) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; libc::PATH_MAX as usize];
        // SAFETY: an open directory descriptor, a NUL-terminated name, a buffer of its length.
        let n = unsafe {
            libc::readlinkat(
                self.fd.as_raw_fd(),
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                buf.len(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        buf.truncate(n as usize);
        Ok(buf)
    }

    /// A regular file opened for reading; `None` when the name is no longer one.
    pub fn open_file(&self, name: &CStr) -> io::Result<Option<OpenedFile>> {
        let Some(fd) = self.open_regular(name)? else {
            return Ok(None);
        };
        let st = fstat(&fd)?;
        if kind_of(st.st_mode) != EntryKind::File {
            return Ok(None);
        }
        Ok(Some(OpenedFile {
            file: File::from(fd),
            executable: st.st_mode & 0o100 != 0,
        }))
    }

    #[cfg(target_os = "linux")]
    fn open_regular(&self, name: &CStr) -> io::Result<Option<OwnedFd>> {
        let flags = libc::O_PATH | libc::O_NOFOLLOW;
        let path = match open_at(self.fd.as_raw_fd(), name, flags) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(None),
            Err(e) => return Err(e),
        };
        if kind_of(fstat(&path)?.st_mode) != EntryKind::File {
            return Ok(None);
        }
        let proc = CString::new(format!("/proc/self/fd/{}", path.as_raw_fd()))
            .map_err(io::Error::other)?;
        match open_reading(|flags| open_at(libc::AT_FDCWD, &proc, flags)) {
            Ok(fd) => Ok(Some(fd)),
            // No /proc: opened by name, as elsewhere.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => self.open_by_name(name),
            Err(e) => Err(e),
        }
    }

    /// macOS has no `O_PATH` to look before opening (nor `/proc/self/fd` to reopen by):
    /// the name is opened `O_NONBLOCK` and what was opened is checked, so a FIFO there is
    /// opened but never waited on or read.
    #[cfg(not(target_os = "linux"))]
    fn open_regular(&self, name: &CStr) -> io::Result<Option<OwnedFd>> {
        self.open_by_name(name)
    }

    /// `O_NONBLOCK`: a FIFO swapped in after the look is not waited on (the caller checks
    /// what was opened).
    fn open_by_name(&self, name: &CStr) -> io::Result<Option<OwnedFd>> {
        let flags = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
        match open_reading(|f| open_at(self.fd.as_raw_fd(), name, f | flags)) {
            Ok(fd) => Ok(Some(fd)),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ELOOP)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(target_os = "linux")]
fn errno_location() -> *mut libc::c_int {
    // SAFETY: always valid for the calling thread.
    unsafe { libc::__errno_location() }
}

#[cfg(not(target_os = "linux"))]
fn errno_location() -> *mut libc::c_int {
    // SAFETY: always valid for the calling thread.
    unsafe { libc::__error() }
}
