//! Thin, safe wrappers over the descriptor-relative system calls the host path uses:
//! `openat2` confined to a root, and the `*at` calls on one name inside a held directory
//! (which resolve nothing beyond that name).
//!
//! `openat2`, `O_PATH` and `/proc/self/fd` are Linux's. Their only caller that needs them
//! is the container-root path (`host_files`), which is off on macOS (`ContainerRoot`): there
//! `open_in_root` and `reopen` answer `ENOSYS`, which that path takes as "let the engine
//! answer". The `*at` calls are POSIX and serve on both.

use std::ffi::CString;
#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// How often an `openat2` that raced a rename (`EAGAIN`) is tried again.
#[cfg(target_os = "linux")]
const RACE_RETRIES: usize = 16;

/// Linux's limit on symlinks followed in one resolution.
pub const MAX_LINKS: usize = 40;

pub fn cstr(text: &str) -> std::io::Result<CString> {
    CString::new(text).map_err(|_| errno(libc::EINVAL))
}

pub fn errno(code: libc::c_int) -> std::io::Error {
    std::io::Error::from_raw_os_error(code)
}

fn check(rc: libc::c_int) -> std::io::Result<libc::c_int> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn owned(fd: libc::c_int) -> OwnedFd {
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// Holds a file to inspect it (`fstat`, `fstatfs`) without opening it for I/O. macOS has
/// no `O_PATH`; its stand-in there only builds, since the code holding files this way runs
/// on Linux alone (see the module's comment).
#[cfg(target_os = "linux")]
pub const O_PATH: libc::c_int = libc::O_PATH;
#[cfg(not(target_os = "linux"))]
pub const O_PATH: libc::c_int = libc::O_RDONLY | libc::O_NONBLOCK;

/// Holds a directory to resolve names beneath it. Linux holds it with `O_PATH` (search
/// permission is enough); macOS opens it for reading, so there the directory must be
/// readable too.
#[cfg(target_os = "linux")]
pub const HOLD_DIR: libc::c_int = libc::O_PATH | libc::O_DIRECTORY;
#[cfg(not(target_os = "linux"))]
pub const HOLD_DIR: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY;

/// Opens `path` as if `root` were `/`: absolute symlinks and `..` stay beneath it, magic
/// links (`/proc/*/fd/*`, `/proc/*/root`) are refused, and mount points inside it are
/// crossed. `follow` decides whether a final symlink is followed.
#[cfg(target_os = "linux")]
pub fn open_in_root(
    root: &OwnedFd,
    path: &str,
    flags: libc::c_int,
    follow: bool,
) -> std::io::Result<OwnedFd> {
    let name = cstr(path)?;
    let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
    // SAFETY: open_how is plain data; every field is set below.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | nofollow | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS;
    for _ in 0..RACE_RETRIES {
        // SAFETY: a valid dirfd, a NUL-terminated path, and `how` with its true size.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                root.as_raw_fd(),
                name.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 {
            return Ok(owned(fd as libc::c_int));
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EAGAIN) {
            return Err(err);
        }
    }
    Err(errno(libc::EAGAIN))
}

/// Off on macOS: no `openat2` (nor any resolution confined to a root by the kernel).
#[cfg(not(target_os = "linux"))]
pub fn open_in_root(
    _root: &OwnedFd,
    _path: &str,
    _flags: libc::c_int,
    _follow: bool,
) -> std::io::Result<OwnedFd> {
    Err(errno(libc::ENOSYS))
}

/// Opens one `name` inside `dir`, never following a symlink there.
pub fn open_at(
    dir: RawFd,
    name: &CString,
    flags: libc::c_int,
    mode: libc::c_uint,
) -> std::io::Result<OwnedFd> {
    // SAFETY: a valid dir fd and NUL-terminated name.
    let fd = check(unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode,
        )
    })?;
    Ok(owned(fd))
}

/// A new descriptor for what an `O_PATH` descriptor names, opened for I/O. The inode is
/// the one already held: nothing is resolved again.
#[cfg(target_os = "linux")]
pub fn reopen(fd: &OwnedFd, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    let path = cstr(&format!("/proc/self/fd/{}", fd.as_raw_fd()))?;
    // SAFETY: a NUL-terminated path naming our own descriptor.
    let fd = check(unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) })?;
    Ok(owned(fd))
}

/// Off on macOS: it has no `O_PATH` descriptors to reopen.
#[cfg(not(target_os = "linux"))]
pub fn reopen(_fd: &OwnedFd, _flags: libc::c_int) -> std::io::Result<OwnedFd> {
    Err(errno(libc::ENOSYS))
}

pub fn fstat(fd: RawFd) -> std::io::Result<libc::stat> {
    // SAFETY: st is a properly sized out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    check(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

/// The file system type (`f_type`) a descriptor lies on.
pub fn fs_type(fd: RawFd) -> std::io::Result<i64> {
    // SAFETY: as above.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    check(unsafe { libc::fstatfs(fd, &mut st) })?;
    #[allow(clippy::unnecessary_cast)]
    Ok(st.f_type as i64)
}

/// `name` inside `dir` itself (a symlink is not followed).
pub fn lstat_at(dir: RawFd, name: &CString) -> std::io::Result<libc::stat> {
    // SAFETY: as above.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    check(unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) })?;
    Ok(st)
}

pub fn read_link_at(dir: RawFd, name: &CString) -> std::io::Result<String> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: buf is writable for its length.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

pub fn mkdir_at(dir: RawFd, name: &CString, mode: libc::mode_t) -> std::io::Result<()> {
    // SAFETY: valid dir fd and name.
    check(unsafe { libc::mkdirat(dir, name.as_ptr(), mode) }).map(|_| ())
}

pub fn rename_at(dir: RawFd, from: &CString, to: &CString) -> std::io::Result<()> {
    // SAFETY: valid dir fd and names, both inside `dir`.
    check(unsafe { libc::renameat(dir, from.as_ptr(), dir, to.as_ptr()) }).map(|_| ())
}

pub fn unlink_at(dir: RawFd, name: &CString) {
    // SAFETY: removes one name inside a held directory.
    unsafe { libc::unlinkat(dir, name.as_ptr(), 0) };
}

/// The names in the directory `dir` holds, but `.` and `..`, read with `readdir` from a
/// descriptor of its own (`openat(dir, ".")`, so the listing starts at the beginning
/// whatever was read through `dir`): nothing is resolved but the held directory.
pub fn entry_names(dir: &OwnedFd) -> std::io::Result<Vec<CString>> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    let held = std::os::fd::AsRawFd::as_raw_fd(dir);
    let own = open_at(held, &CString::from(c"."), flags, 0)?;
    let raw = std::os::fd::IntoRawFd::into_raw_fd(own);
    // SAFETY: `raw` is an open directory; the stream owns it until `closedir`.
    let stream = unsafe { libc::fdopendir(raw) };
    if stream.is_null() {
        let err = std::io::Error::last_os_error();
        // SAFETY: `raw` is ours and still open.
        unsafe { libc::close(raw) };
        return Err(err);
    }
    let mut names = Vec::new();
    loop {
        // SAFETY: `stream` is open; the entry is copied before the next call.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            break;
        }
        // SAFETY: `d_name` is NUL-terminated.
        let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
        if name != c"." && name != c".." {
            names.push(name.to_owned());
        }
    }
    // SAFETY: closes the stream (and its descriptor) once.
    unsafe { libc::closedir(stream) };
    Ok(names)
}

pub fn chown_mod(fd: RawFd, uid: u32, gid: u32, mode: u32) -> std::io::Result<()> {
    // SAFETY: a valid fd.
    check(unsafe { libc::fchown(fd, uid, gid) })?;
    check(unsafe { libc::fchmod(fd, mode as libc::mode_t) }).map(|_| ())
}

pub fn file_type(st: &libc::stat) -> libc::mode_t {
    st.st_mode & libc::S_IFMT
}

/// Swaps the names `a` and `b` in one step (both must exist): `renameat2` with
/// `RENAME_EXCHANGE` on Linux, `renameatx_np` with `RENAME_SWAP` on macOS (APFS and HFS+;
/// elsewhere `ENOTSUP`, an error as Linux's `EINVAL` is).
pub fn swap_paths(a: &std::path::Path, b: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &std::path::Path| {
        CString::new(p.as_os_str().as_bytes()).map_err(|_| errno(libc::EINVAL))
    };
    let (a, b) = (c(a)?, c(b)?);
    // SAFETY: NUL-terminated paths; the call swaps two names or changes nothing.
    #[cfg(target_os = "linux")]
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    // SAFETY: as above.
    #[cfg(target_os = "macos")]
    let rc = unsafe {
        libc::renameatx_np(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_SWAP,
        )
    };
    check(rc).map(|_| ())
}
