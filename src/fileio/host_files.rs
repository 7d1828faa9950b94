//! The host fast path: file operations answered from the container's own root
//! (`ContainerRoot`), with every path resolved by the kernel *inside* that root
//! (`openat2` with `RESOLVE_IN_ROOT`). Symlinks, `..` and mount points resolve exactly as
//! the container resolves them, so nothing the container controls — a symlink, a bind
//! mount's source swapped for a link — leads anywhere outside its file system. Volumes and
//! tmpfs mounts are seen as the container sees them.
//!
//! Only regular files and directories on ordinary file systems are opened for I/O: a path
//! is first opened `O_PATH` and inspected, and a FIFO, socket, device node, or a file of
//! procfs/sysfs is left to the engine (`Fallback`), as is anything this process may not
//! do in the container's place.
//!
//! Linux only: built for macOS, it is never reached there, since no `ContainerRoot` can be
//! opened on a Mac (and `open_in_root` would answer `ENOSYS`, a `Fallback`).

use std::ffi::CString;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::container_root::ContainerRoot;
use super::fd_ops::*;
use super::file_replace::replace_file;
use crate::container_archive::{join, normalize, split, strip_base, too_large};
use crate::error::{Error, ErrorCode, Result};

/// Paths whose mounts the kernel fills in for whoever looks (`/proc/self`, devices): the
/// engine answers for them.
const PSEUDO_TREES: [&str; 3] = ["/proc", "/sys", "/dev"];

/// File systems whose files are views of the kernel, not data: never opened here.
const PSEUDO_FILE_SYSTEMS: [i64; 9] = [
    0x9fa0,      // proc
    0x6265_6572, // sysfs
    0x0027_e0eb, // cgroup
    0x6367_7270, // cgroup2
    0x6462_6720, // debugfs
    0x7472_6163, // tracefs
    0x7363_6673, // securityfs
    0xcafe_4a11, // bpf
    0x1cd1,      // devpts
];

/// What the host path answered, or that the engine must answer.
pub enum Host<T> {
    Done(T),
    Fallback,
}

pub struct HostStat {
    pub size: u64,
    pub mtime_ms: f64,
    pub is_dir: bool,
}

fn host_stat(st: &libc::stat) -> HostStat {
    HostStat {
        size: st.st_size as u64,
        mtime_ms: st.st_mtime as f64 * 1000.0 + st.st_mtime_nsec as f64 / 1e6,
        is_dir: file_type(st) == libc::S_IFDIR,
    }
}

/// `st_mode` is 32 bits on Linux, 16 on macOS.
#[allow(clippy::unnecessary_cast)]
fn permission_bits(st: &libc::stat) -> u32 {
    st.st_mode as u32 & 0o7777
}

/// Errors that say this process cannot act in the container's place, not what the
/// container would see: the engine is asked instead. `ELOOP` is among them because a magic
/// link (`/proc/<pid>/root`), refused here, gives it as a real loop does; the engine answers
/// a real loop with `ELOOP` too.
fn not_ours(err: &std::io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(
            libc::EACCES
                | libc::EPERM
                | libc::ENOSYS
                | libc::EAGAIN
                | libc::EBUSY
                | libc::EXDEV
                | libc::ELOOP
        )
    )
}

fn io_error(err: std::io::Error, container: &str, path: &str) -> Error {
    let code = match err.raw_os_error() {
        Some(libc::ENOENT) => ErrorCode::Enoent,
        Some(libc::ENOTDIR) => ErrorCode::Enotdir,
        Some(libc::EISDIR) => ErrorCode::Eisdir,
        Some(libc::EEXIST) => ErrorCode::Eexist,
        Some(libc::ELOOP) => ErrorCode::Eloop,
        Some(libc::EROFS) => ErrorCode::Eacces,
        Some(libc::ENAMETOOLONG) => ErrorCode::Enametoolong,
        _ => ErrorCode::EngineError,
    };
    Error::new(code, format!("'{path}' in container '{container}': {err}"))
}

/// The container's file system, reached from the host.
#[derive(Clone)]
pub struct HostFiles {
    pub root: ContainerRoot,
    pub container: String,
}

/// What the final component of a path to write is.
enum WriteTarget {
    /// The directory to write in, the name, and the mode to give the file.
    File(OwnedFd, CString, u32),
    /// Not a regular file or a place for one: the engine decides.
    Other,
}

impl HostFiles {
    fn fail(&self, err: std::io::Error, path: &str) -> Error {
        io_error(err, &self.container, path)
    }

    /// `Err` becomes `Fallback` where the engine must answer, else a coded error.
    fn settle<T>(&self, result: std::io::Result<T>, path: &str) -> Result<Host<T>> {
        match result {
            Ok(value) => Ok(Host::Done(value)),
            Err(e) if not_ours(&e) => Ok(Host::Fallback),
            Err(e) => Err(self.fail(e, path)),
        }
    }

    /// Whether the host may answer for `path` (normalised) at all.
    pub fn covers(&self, path: &str) -> bool {
        !PSEUDO_TREES.iter().any(|t| strip_base(path, t).is_some())
    }

    fn open(&self, path: &str, flags: libc::c_int, follow: bool) -> std::io::Result<OwnedFd> {
        let root = self.root.open_root()?;
        open_in_root(&root, &normalize(path), flags, follow)
    }

    /// Follows symlinks. `None` for a missing path (or one under a file).
    pub fn stat(&self, path: &str) -> Result<Host<Option<HostStat>>> {
        let found = self
            .open(path, O_PATH, true)
            .and_then(|fd| fstat(fd.as_raw_fd()));
        match found {
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
                Ok(Host::Done(None))
            }
            other => self.settle(other.map(|st| Some(host_stat(&st))), path),
        }
    }

    /// `path` opened for reading when it is a regular file of an ordinary file system.
    fn open_data(&self, path: &str) -> std::io::Result<Option<(OwnedFd, libc::stat)>> {
        let held = self.open(path, O_PATH, true)?;
        let st = fstat(held.as_raw_fd())?;
        match file_type(&st) {
            libc::S_IFREG => {}
            libc::S_IFDIR => return Err(errno(libc::EISDIR)),
            _ => return Ok(None),
        }
        if PSEUDO_FILE_SYSTEMS.contains(&fs_type(held.as_raw_fd())?) {
            return Ok(None);
        }
        Ok(Some((reopen(&held, libc::O_RDONLY)?, st)))
    }

    /// A regular file's content, read whole.
    pub fn read(&self, path: &str) -> Result<Host<Vec<u8>>> {
        let read = self.open_data(path).and_then(|opened| {
            let Some((fd, st)) = opened else {
                return Ok(None);
            };
            let mut data = Vec::with_capacity(st.st_size as usize);
            std::fs::File::from(fd).read_to_end(&mut data)?;
            Ok(Some(data))
        });
        match self.settle(read, path)? {
            Host::Done(Some(data)) => Ok(Host::Done(data)),
            _ => Ok(Host::Fallback),
        }
    }

    /// A regular file of at most `limit` bytes; `None` when it does not exist. A larger
    /// one is `EFBIG` after reading no more than `limit + 1` bytes.
    pub fn read_bounded(&self, path: &str, limit: u64) -> Result<Host<Option<Vec<u8>>>> {
        let read = self.open_data(path).and_then(|opened| {
            let Some((fd, _)) = opened else {
                return Ok(None);
            };
            let mut data = Vec::new();
            std::fs::File::from(fd)
                .take(limit + 1)
                .read_to_end(&mut data)?;
            Ok(Some(data))
        });
        match read {
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(Host::Done(None)),
            Ok(Some(data)) if data.len() as u64 > limit => {
                Err(too_large(&self.container, path, limit))
            }
            Ok(None) => Ok(Host::Fallback),
            other => self
                .settle(other.map(|d| d.map(Some)), path)
                .map(|h| match h {
                    Host::Done(Some(d)) => Host::Done(d),
                    _ => Host::Fallback,
                }),
        }
    }

    pub fn read_dir(&self, path: &str) -> Result<Host<Vec<String>>> {
        let listed = self
            .open(path, libc::O_RDONLY | libc::O_DIRECTORY, true)
            .and_then(|fd| {
                std::fs::read_dir(format!("/proc/self/fd/{}", fd.as_raw_fd()))?
                    .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                    .collect::<std::io::Result<Vec<String>>>()
            });
        self.settle(listed, path)
    }

    /// Where a write to `path` lands: final symlinks are followed (a dangling one to the
    /// file it names, as Node's `writeFile` does), each step confined to the root.
    fn write_target(&self, path: &str) -> std::io::Result<WriteTarget> {
        let mut target = normalize(path);
        for _ in 0..=MAX_LINKS {
            let Some((parent, name)) = split(&target) else {
                return Err(errno(libc::EISDIR));
            };
            let dir = self.open(&parent, HOLD_DIR, true)?;
            let name = cstr(&name)?;
            let st = match lstat_at(dir.as_raw_fd(), &name) {
                Ok(st) => st,
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    return Ok(WriteTarget::File(dir, name, 0o644))
                }
                Err(e) => return Err(e),
            };
            match file_type(&st) {
                libc::S_IFLNK => {
                    let link = read_link_at(dir.as_raw_fd(), &name)?;
                    target = normalize(&if link.starts_with('/') {
                        link
                    } else {
                        join(&parent, &link)
                    });
                }
                libc::S_IFREG => return Ok(WriteTarget::File(dir, name, permission_bits(&st))),
                libc::S_IFDIR => return Err(errno(libc::EISDIR)),
                _ => return Ok(WriteTarget::Other),
            }
        }
        Err(errno(libc::ELOOP))
    }

    /// Atomic for readers, and leaves nothing when interrupted (`file_replace`): a new file
    /// in the same directory, owned and moded as asked, renamed over the target. An
    /// existing file keeps its mode.
    pub fn write(&self, path: &str, content: &[u8], uid: u32, gid: u32) -> Result<Host<()>> {
        let (dir, name, mode) = match self.write_target(path) {
            Ok(WriteTarget::File(dir, name, mode)) => (dir, name, mode),
            Ok(WriteTarget::Other) => return Ok(Host::Fallback),
            Err(e) => return self.settle(Err(e), path),
        };
        let written = replace_file(dir.as_raw_fd(), &name, content, uid, gid, mode);
        self.settle(written, path)
    }

    /// `mkdir -p`: each missing directory made owned by `uid:gid`, mode 0755.
    pub fn make_dirs(&self, path: &str, uid: u32, gid: u32) -> Result<Host<()>> {
        let path = normalize(path);
        let names: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        let mut here = String::from("/");
        let mut dir = match self.open("/", HOLD_DIR, true) {
            Ok(dir) => dir,
            Err(e) => return self.settle(Err(e), &path),
        };
        for (i, name) in names.iter().enumerate() {
            let last = i + 1 == names.len();
            here = join(&here, name);
            let made = match self.open(&here, HOLD_DIR, true) {
                Ok(next) => Ok(next),
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    make_dir(dir.as_raw_fd(), name, uid, gid)
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) && last => {
                    Err(errno(libc::EEXIST))
                }
                Err(e) => Err(e),
            };
            dir = match made {
                Ok(next) => next,
                Err(e) => return self.settle(Err(e), &path),
            };
        }
        Ok(Host::Done(()))
    }
}

/// Makes `name` in `dir` (an existing dangling symlink there is `EEXIST`, as for `mkdir`)
/// and returns it held.
fn make_dir(dir: RawFd, name: &str, uid: u32, gid: u32) -> std::io::Result<OwnedFd> {
    let name = cstr(name)?;
    if lstat_at(dir, &name).is_ok() {
        return Err(errno(libc::EEXIST));
    }
    match mkdir_at(dir, &name, 0o700) {
        Ok(()) => {
            let made = open_at(dir, &name, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
            chown_mod(made.as_raw_fd(), uid, gid, 0o755)?;
            Ok(made)
        }
        // Made meanwhile by someone else: use theirs.
        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => open_at(dir, &name, HOLD_DIR, 0),
        Err(e) => Err(e),
    }
}
