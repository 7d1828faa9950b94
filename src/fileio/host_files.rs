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
use std::sync::Arc;

use super::container_path::{clean, join, normalize, split, strip_base};
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

/// `st_mode` is 32 bits on Linux, 16 on macOS.
#[allow(clippy::unnecessary_cast)]
fn permission_bits(st: &libc::stat) -> u32 {
    st.st_mode as u32 & 0o7777
}

fn host_stat(st: &libc::stat) -> HostStat {
    HostStat {
        size: st.st_size as u64,
        mtime_ms: st.st_mtime as f64 * 1000.0 + st.st_mtime_nsec as f64 / 1e6,
        is_dir: st.st_mode & libc::S_IFMT == libc::S_IFDIR,
        mode: permission_bits(st),
    }
}

/// Errors the container would not have seen: this process lacks permission where the
/// engine (root in the container) has it, or the container changed a path under our walk.
fn not_ours(err: &std::io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::EACCES | libc::EPERM | libc::ELOOP)
    )
}

/// The host file system under a container's bind mounts.
#[derive(Clone)]
pub struct HostFiles {
    pub mounts: Arc<[HostMount]>,
    /// Targets of the container's other mounts (volumes, tmpfs, files the engine manages):
    /// what lies under them is not in the bind mount's host folder.
    pub covered: Arc<[String]>,
    pub container: String,
}

impl HostFiles {
    fn fail(&self, err: std::io::Error, path: &str) -> Error {
        io_error(err, &self.container, path)
    }

    /// The deepest mount containing `path` and the rest of the path below it; `None` when
    /// that mount is not a bind mount.
    fn mount_for<'p>(&self, path: &'p str) -> Option<(&HostMount, &'p str)> {
        let bind = self
            .mounts
            .iter()
            .filter_map(|m| strip_base(path, &m.target).map(|rest| (m, rest)))
            .max_by_key(|(m, _)| m.target.len())?;
        let covered = self
            .covered
            .iter()
            .any(|c| c.len() > bind.0.target.len() && strip_base(path, c).is_some());
        (!covered).then_some(bind)
    }

    /// Whether `path` (normalised) lies lexically in a bind mount the host may answer for;
    /// a path that does not is never answered here, whatever links it holds.
    pub fn covers(&self, path: &str) -> bool {
        self.mount_for(path).is_some()
    }

    /// Walks to `path`. `Ok(None)` when resolution leaves what the host can answer for.
    fn walk(&self, path: &str, follow_final: bool) -> std::io::Result<Option<Walked<'_>>> {
        let mut path = normalize(path);
        let mut links = 0;
        'restart: loop {
            let Some((mount, rest)) = self.mount_for(&path) else {
                return Ok(None);
            };
            let root = cstr(&mount.host.to_string_lossy())?;
            // The mount's source is the host's own configuration, not the container's; a
            // source that is not a directory here (a file mount, or another host's path)
            // is left to the engine.
            let Ok(mut dir) = open_at(libc::AT_FDCWD, &root, libc::O_RDONLY | libc::O_DIRECTORY, 0)
            else {
                return Ok(None);
            };
            let components: Vec<&str> = rest
                .split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .collect();
            let mut here = mount.target.clone();
            if components.is_empty() {
                return Ok(Some(Walked {
                    mount,
                    parent: dir,
                    name: None,
                }));
            }
            for (i, component) in components.iter().enumerate() {
                let remaining = components[i + 1..].join("/");
                if *component == ".." {
                    let up = split(&here).map(|(p, _)| p).unwrap_or_else(|| "/".into());
                    path = join(&up, &remaining);
                    continue 'restart;
                }
                let name = cstr(component)?;
                let below = join(&here, component);
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
                    let destination = if target.starts_with('/') {
                        target
                    } else {
                        join(&here, &target)
                    };
                    path = clean(&join(&destination, &remaining));
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

    /// Follows symlinks. `Done(None)` for a missing path (or one under a file).
    pub fn stat(&self, path: &str) -> Result<Host<Option<HostStat>>> {
        let walked = match self.walk(path, true) {
            Ok(Some(w)) => w,
            Ok(None) => return Ok(Host::Fallback),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                return Ok(Host::Done(None))
            }
            Err(e) if not_ours(&e) => return Ok(Host::Fallback),
            Err(e) => return Err(self.fail(e, path)),
        };
        let st = match &walked.name {
            None => fstat(walked.parent.as_raw_fd()),
            Some(name) => lstat_at(walked.parent.as_raw_fd(), name),
        };
        match st {
            Ok(st) if is_link(&st) => Ok(Host::Fallback),
            Ok(st) => Ok(Host::Done(Some(host_stat(&st)))),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(Host::Done(None)),
            Err(e) if not_ours(&e) => Ok(Host::Fallback),
            Err(e) => Err(self.fail(e, path)),
        }
    }

    fn open_final(&self, walked: &Walked<'_>, flags: libc::c_int) -> std::io::Result<OwnedFd> {
        match &walked.name {
            None => open_at(walked.parent.as_raw_fd(), &cstr(".")?, flags, 0),
            Some(name) => open_at(walked.parent.as_raw_fd(), name, flags | libc::O_NOFOLLOW, 0),
        }
    }

    /// Walks and opens the final component; `None` when the engine must answer.
    fn open(&self, path: &str, flags: libc::c_int) -> Result<Option<OwnedFd>> {
        let walked = match self.walk(path, true) {
            Ok(Some(w)) => w,
            Ok(None) => return Ok(None),
            Err(e) if not_ours(&e) => return Ok(None),
            Err(e) => return Err(self.fail(e, path)),
        };
        match self.open_final(&walked, flags) {
            Ok(fd) => Ok(Some(fd)),
            Err(e) if not_ours(&e) => Ok(None),
            Err(e) => Err(self.fail(e, path)),
        }
    }

    /// A regular file's content. Never blocks on a FIFO or device the container put there:
    /// those are left to the engine.
    pub fn read(&self, path: &str) -> Result<Host<Vec<u8>>> {
        let Some(fd) = self.open(path, libc::O_RDONLY | libc::O_NONBLOCK)? else {
            return Ok(Host::Fallback);
        };
        let st = fstat(fd.as_raw_fd()).map_err(|e| self.fail(e, path))?;
        match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => {}
            libc::S_IFDIR => {
                return Err(self.fail(std::io::Error::from_raw_os_error(libc::EISDIR), path))
            }
            _ => return Ok(Host::Fallback),
        }
        let mut data = Vec::with_capacity(st.st_size as usize);
        std::fs::File::from(fd)
            .read_to_end(&mut data)
            .map_err(|e| self.fail(e, path))?;
        Ok(Host::Done(data))
    }

    pub fn read_dir(&self, path: &str) -> Result<Host<Vec<String>>> {
        let Some(fd) = self.open(path, libc::O_RDONLY | libc::O_DIRECTORY)? else {
            return Ok(Host::Fallback);
        };
        let listing = std::fs::read_dir(format!("/proc/self/fd/{}", fd.as_raw_fd()))
            .map_err(|e| self.fail(e, path))?;
        let mut names = Vec::new();
        for entry in listing {
            let entry = entry.map_err(|e| self.fail(e, path))?;
            names.push(entry.file_name().to_string_lossy().into_owned());
        }
        Ok(Host::Done(names))
    }

    /// Atomic for readers: a temporary file in the same directory, owned and moded as
    /// asked, renamed over the target. An existing file keeps its mode.
    pub fn write(&self, path: &str, content: &[u8], uid: u32, gid: u32) -> Result<Host<()>> {
        let walked = match self.walk(path, true) {
            Ok(Some(w)) => w,
            Ok(None) => return Ok(Host::Fallback),
            Err(e) if not_ours(&e) => return Ok(Host::Fallback),
            Err(e) => return Err(self.fail(e, path)),
        };
        let fail = |e: std::io::Error| self.fail(e, path);
        let Some(name) = &walked.name else {
            return Err(fail(std::io::Error::from_raw_os_error(libc::EISDIR)));
        };
        let dir = walked.parent.as_raw_fd();
        let mode = match lstat_at(dir, name) {
            Ok(st) if is_link(&st) => return Ok(Host::Fallback),
            Ok(st) if host_stat(&st).is_dir => {
                return Err(fail(std::io::Error::from_raw_os_error(libc::EISDIR)))
            }
            Ok(st) => host_stat(&st).mode,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => 0o644,
            Err(e) if not_ours(&e) => return Ok(Host::Fallback),
            Err(e) => return Err(fail(e)),
        };
        if walked.mount.readonly {
            return Err(fail(std::io::Error::from_raw_os_error(libc::EROFS)));
        }
        let temp = cstr(&format!(
            ".container-isolation-{}.tmp",
            uuid::Uuid::new_v4().simple()
        ))
        .map_err(fail)?;
        let fd = match open_at(
            dir,
            &temp,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
            0o600,
        ) {
            Ok(fd) => fd,
            Err(e) if not_ours(&e) => return Ok(Host::Fallback),
            Err(e) => return Err(fail(e)),
        };
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
            if not_ours(&e) {
                return Ok(Host::Fallback);
            }
            return Err(fail(e));
        }
        Ok(Host::Done(()))
    }

    /// `mkdir -p`, creating each missing directory owned by `uid:gid`, mode 0755.
    pub fn make_dirs(&self, path: &str, uid: u32, gid: u32) -> Result<Host<()>> {
        let fail = |e: std::io::Error| self.fail(e, path);
        let walked = match self.walk(path, true) {
            Ok(Some(w)) => w,
            Ok(None) => return Ok(Host::Fallback),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                let Some((parent, _)) = split(path) else {
                    return Err(fail(e));
                };
                return match self.make_dirs(&parent, uid, gid)? {
                    Host::Done(()) => self.make_dirs(path, uid, gid),
                    Host::Fallback => Ok(Host::Fallback),
                };
            }
            Err(e) if not_ours(&e) => return Ok(Host::Fallback),
            Err(e) => return Err(fail(e)),
        };
        let Some(name) = &walked.name else {
            return Ok(Host::Done(()));
        };
        let dir = walked.parent.as_raw_fd();
        match lstat_at(dir, name) {
            Ok(st) if is_link(&st) => return Ok(Host::Fallback),
            Ok(st) if host_stat(&st).is_dir => return Ok(Host::Done(())),
            Ok(_) => return Err(fail(std::io::Error::from_raw_os_error(libc::EEXIST))),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(e) if not_ours(&e) => return Ok(Host::Fallback),
            Err(e) => return Err(fail(e)),
        }
        if walked.mount.readonly {
            return Err(fail(std::io::Error::from_raw_os_error(libc::EROFS)));
        }
        // SAFETY: valid dir fd and name.
        match check(unsafe { libc::mkdirat(dir, name.as_ptr(), 0o700) }) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => return Ok(Host::Done(())),
            Err(e) if not_ours(&e) => return Ok(Host::Fallback),
            Err(e) => return Err(fail(e)),
        }
        let made = open_at(
            dir,
            name,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
            0,
        )
        .and_then(|fd| {
            // SAFETY: a valid fd of the directory just made.
            check(unsafe { libc::fchown(fd.as_raw_fd(), uid, gid) })?;
            check(unsafe { libc::fchmod(fd.as_raw_fd(), 0o755) })
        });
        made.map_err(fail)?;
        Ok(Host::Done(()))
    }
}
