//! The host fast path for paths inside a bind mount. The walk holds a directory fd at every
//! step and opens each component with `O_NOFOLLOW`, so a symlink the container controls is
//! never followed by the kernel on the host: it is read, resolved in *container* path space,
//! and the walk restarts from the mount that contains the result. A result outside every
//! bind mount returns `Fallback`, and the caller asks the engine, which resolves the path as
//! the container does.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;

use super::container_path::{normalize, strip_base};
use super::engine_files::link_destination;
use crate::error::{Error, ErrorCode, Result};

const MAX_LINKS: usize = 40;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostMount {
    pub host: PathBuf,
    pub target: String,
    pub readonly: bool,
}

/// What the host path answered, or that the engine must answer.
pub enum Host<T> {
    Done(T),
    Fallback,
}

pub struct HostStat {
    pub size: u64,
    pub mtime_ms: f64,
    pub is_dir: bool,
    pub mode: u32,
}

/// A path reached by the walk: its parent directory and final name (`None` for a mount
/// root), with every symlink on the way resolved.
struct Walked<'m> {
    mount: &'m HostMount,
    parent: OwnedFd,
    name: Option<CString>,
}

fn io_error(err: std::io::Error, container: &str, path: &str) -> Error {
    let code = match err.raw_os_error() {
        Some(libc::ENOENT) => ErrorCode::Enoent,
        Some(libc::ENOTDIR) => ErrorCode::Enotdir,
        Some(libc::EISDIR) => ErrorCode::Eisdir,
        Some(libc::EEXIST) => ErrorCode::Eexist,
        Some(libc::ELOOP) => ErrorCode::Eloop,
        Some(libc::EACCES | libc::EPERM | libc::EROFS) => ErrorCode::Eacces,
        _ => ErrorCode::EngineError,
    };
    Error::new(code, format!("'{path}' in container '{container}': {err}"))
}

fn cstr(text: &str) -> std::io::Result<CString> {
    CString::new(text).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

fn check(rc: libc::c_int) -> std::io::Result<libc::c_int> {
    if rc < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

fn open_at(
    dir: RawFd,
    name: &CString,
    flags: libc::c_int,
    mode: libc::c_uint,
) -> std::io::Result<OwnedFd> {
    // SAFETY: a valid dir fd and NUL-terminated name; the returned fd is owned once.
    let fd = check(unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) })?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn lstat_at(dir: RawFd, name: &CString) -> std::io::Result<libc::stat> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a properly sized out-parameter.
    check(unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) })?;
    Ok(st)
}

fn fstat(fd: RawFd) -> std::io::Result<libc::stat> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    check(unsafe { libc::fstat(fd, &mut st) })?;
    Ok(st)
}

fn read_link_at(dir: RawFd, name: &CString) -> std::io::Result<String> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: buf is writable for its length.
    let n = unsafe { libc::readlinkat(dir, name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn is_link(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFLNK
}

fn host_stat(st: &libc::stat) -> HostStat {
    HostStat {
        size: st.st_size as u64,
        mtime_ms: st.st_mtime as f64 * 1000.0 + st.st_mtime_nsec as f64 / 1e6,
        is_dir: st.st_mode & libc::S_IFMT == libc::S_IFDIR,
        mode: st.st_mode & 0o7777,
    }
}

pub struct HostFiles<'a> {
    pub mounts: &'a [HostMount],
    pub container: &'a str,
}

impl<'a> HostFiles<'a> {
    /// The deepest mount containing `path`, and the rest of the path below it.
    fn mount_for<'p>(&self, path: &'p str) -> Option<(&'a HostMount, &'p str)> {
        self.mounts
            .iter()
            .filter_map(|m| strip_base(path, &m.target).map(|rest| (m, rest)))
            .max_by_key(|(m, _)| m.target.len())
    }

    /// Walks to `path`. `Ok(None)` when resolution leaves the bind mounts.
    fn walk(&self, path: &str, follow_final: bool) -> std::io::Result<Option<Walked<'a>>> {
        let mut path = normalize(path);
        let mut links = 0;
        'restart: loop {
            let Some((mount, rest)) = self.mount_for(&path) else {
                return Ok(None);
            };
            let root = cstr(&mount.host.to_string_lossy())?;
            // The mount's host source is the caller's path, not the container's.
            let mut dir = open_at(libc::AT_FDCWD, &root, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
            let components: Vec<&str> = rest.split('/').filter(|c| !c.is_empty()).collect();
            let mut here = mount.target.clone();
            if components.is_empty() {
                return Ok(Some(Walked {
                    mount,
                    parent: dir,
                    name: None,
                }));
            }
            for (i, component) in components.iter().enumerate() {
                let name = cstr(component)?;
                let below = if here == "/" {
                    format!("/{component}")
                } else {
                    format!("{here}/{component}")
                };
                let last = i + 1 == components.len();
                let st = match lstat_at(dir.as_raw_fd(), &name) {
                    Ok(st) => Some(st),
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) && last => None,
                    Err(e) => return Err(e),
                };
                if st.as_ref().is_some_and(is_link) && (!last || follow_final) {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
                    }
                    let target = read_link_at(dir.as_raw_fd(), &name)?;
                    let mut next = link_destination(&below, &target);
                    for more in &components[i + 1..] {
                        next.push('/');
                        next.push_str(more);
                    }
                    path = normalize(&next);
                    continue 'restart;
                }
                if last {
                    return Ok(Some(Walked {
                        mount,
                        parent: dir,
                        name: Some(name),
                    }));
                }
                dir = open_at(
                    dir.as_raw_fd(),
                    &name,
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
                    0,
                )?;
                here = below;
            }
            unreachable!("the last component returns");
        }
    }

    fn walk_or_error(&self, path: &str, follow: bool) -> Result<Option<Walked<'a>>> {
        self.walk(path, follow)
            .map_err(|e| io_error(e, self.container, path))
    }

    /// Follows symlinks. `Done(None)` for a missing path (or one under a file).
    pub fn stat(&self, path: &str) -> Result<Host<Option<HostStat>>> {
        let walked = match self.walk(path, true) {
            Ok(Some(w)) => w,
            Ok(None) => return Ok(Host::Fallback),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                return Ok(Host::Done(None))
            }
            Err(e) => return Err(io_error(e, self.container, path)),
        };
        let st = match &walked.name {
            None => fstat(walked.parent.as_raw_fd()),
            Some(name) => lstat_at(walked.parent.as_raw_fd(), name),
        };
        match st {
            Ok(st) => Ok(Host::Done(Some(host_stat(&st)))),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(Host::Done(None)),
            Err(e) => Err(io_error(e, self.container, path)),
        }
    }

    fn open_final(&self, walked: &Walked<'_>, flags: libc::c_int) -> std::io::Result<OwnedFd> {
        match &walked.name {
            None => open_at(walked.parent.as_raw_fd(), &cstr(".")?, flags, 0),
            Some(name) => open_at(walked.parent.as_raw_fd(), name, flags | libc::O_NOFOLLOW, 0),
        }
    }

    pub fn read(&self, path: &str) -> Result<Host<Vec<u8>>> {
        let Some(walked) = self.walk_or_error(path, true)? else {
            return Ok(Host::Fallback);
        };
        let fd = self
            .open_final(&walked, libc::O_RDONLY)
            .map_err(|e| io_error(e, self.container, path))?;
        let st = fstat(fd.as_raw_fd()).map_err(|e| io_error(e, self.container, path))?;
        if host_stat(&st).is_dir {
            return Err(io_error(
                std::io::Error::from_raw_os_error(libc::EISDIR),
                self.container,
                path,
            ));
        }
        let mut data = Vec::with_capacity(st.st_size as usize);
        std::fs::File::from(fd)
            .read_to_end(&mut data)
            .map_err(|e| io_error(e, self.container, path))?;
        Ok(Host::Done(data))
    }

    pub fn read_dir(&self, path: &str) -> Result<Host<Vec<String>>> {
        let Some(walked) = self.walk_or_error(path, true)? else {
            return Ok(Host::Fallback);
        };
        let fd = self
            .open_final(&walked, libc::O_RDONLY | libc::O_DIRECTORY)
            .map_err(|e| io_error(e, self.container, path))?;
        let listing = std::fs::read_dir(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .map_err(|e| io_error(e, self.container, path))?;
        let mut names = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| io_error(e, self.container, path))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        Ok(Host::Done(names))
    }

    /// Atomic for readers: a temporary file in the same directory, owned and moded as
    /// asked, renamed over the target. An existing file keeps its mode.
    pub fn write(&self, path: &str, content: &[u8], uid: u32, gid: u32) -> Result<Host<()>> {
        let Some(walked) = self.walk_or_error(path, true)? else {
            return Ok(Host::Fallback);
        };
        let fail = |e: std::io::Error| io_error(e, self.container, path);
        if walked.mount.readonly {
            return Err(fail(std::io::Error::from_raw_os_error(libc::EROFS)));
        }
        let Some(name) = &walked.name else {
            return Err(fail(std::io::Error::from_raw_os_error(libc::EISDIR)));
        };
        let dir = walked.parent.as_raw_fd();
        let mode = match lstat_at(dir, name) {
            Ok(st) if host_stat(&st).is_dir => {
                return Err(fail(std::io::Error::from_raw_os_error(libc::EISDIR)))
            }
            Ok(st) => host_stat(&st).mode,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => 0o644,
            Err(e) => return Err(fail(e)),
        };
        let temp_text = format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        );
        let temp = cstr(&temp_text).map_err(fail)?;
        let fd = open_at(
            dir,
            &temp,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
            0o600,
        )
        .map_err(fail)?;
        let written = (|| -> std::io::Result<()> {
            // SAFETY: fchown/fchmod/renameat take a valid fd and NUL-terminated names.
            check(unsafe { libc::fchown(fd.as_raw_fd(), uid, gid) })?;
            check(unsafe { libc::fchmod(fd.as_raw_fd(), mode as libc::mode_t) })?;
            let mut file = std::fs::File::from(fd);
            file.write_all(content)?;
            file.flush()?;
            check(unsafe { libc::renameat(dir, temp.as_ptr(), dir, name.as_ptr()) })?;
            Ok(())
        })();
        if let Err(e) = written {
            // SAFETY: removes only our own temporary name in the held directory.
            unsafe { libc::unlinkat(dir, temp.as_ptr(), 0) };
            return Err(fail(e));
        }
        Ok(Host::Done(()))
    }

    /// `mkdir -p`, creating each missing directory owned by `uid:gid`.
    pub fn make_dirs(&self, path: &str, uid: u32, gid: u32) -> Result<Host<()>> {
        let fail = |e: std::io::Error| io_error(e, self.container, path);
        let walked = match self.walk(path, true) {
            Ok(Some(w)) => w,
            Ok(None) => return Ok(Host::Fallback),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                let parent = super::container_path::split(path)
                    .map(|(p, _)| p)
                    .unwrap_or_else(|| "/".into());
                match self.make_dirs(&parent, uid, gid)? {
                    Host::Done(()) => return self.make_dirs(path, uid, gid),
                    Host::Fallback => return Ok(Host::Fallback),
                }
            }
            Err(e) => return Err(fail(e)),
        };
        let Some(name) = &walked.name else {
            return Ok(Host::Done(()));
        };
        let dir = walked.parent.as_raw_fd();
        match lstat_at(dir, name) {
            Ok(st) if host_stat(&st).is_dir => return Ok(Host::Done(())),
            Ok(_) => return Err(fail(std::io::Error::from_raw_os_error(libc::EEXIST))),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(e) => return Err(fail(e)),
        }
        if walked.mount.readonly {
            return Err(fail(std::io::Error::from_raw_os_error(libc::EROFS)));
        }
        // SAFETY: valid dir fd and name.
        match check(unsafe { libc::mkdirat(dir, name.as_ptr(), 0o755) }) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => return Ok(Host::Done(())),
            Err(e) => return Err(fail(e)),
        }
        check(unsafe { libc::fchownat(dir, name.as_ptr(), uid, gid, libc::AT_SYMLINK_NOFOLLOW) })
            .map_err(fail)?;
        Ok(Host::Done(()))
    }
}
