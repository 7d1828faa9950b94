//! File operations inside the container, each on a thread of its own acting as the caller's
//! user (`creds::act_as`): stat, read, write, mkdir -p, readdir. Only regular files are read;
//! a write goes to an unnamed temporary file (`O_TMPFILE`, a named one where the file system
//! lacks it) that replaces the target only once all of its data has arrived, so a reader
//! or an interruption sees the old content or the new, never a mix, and nothing is left.

use std::ffi::{CString, OsStr};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;

use container_isolation_agent::protocol::{FileKind, Message, Stat, CHUNK};

use super::frame_out::FrameOut;

/// What a write's thread receives after its request: data, then the end or an abort.
pub enum WriteInput {
    Data(Vec<u8>),
    End,
    Abort,
}

pub fn failed(err: &std::io::Error, path: &str) -> Message {
    Message::Failed {
        errno: err.raw_os_error().unwrap_or(libc::EIO),
        message: format!("'{path}': {err}"),
    }
}

fn errno(code: i32) -> std::io::Error {
    std::io::Error::from_raw_os_error(code)
}

fn cstr(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| errno(libc::EINVAL))
}

fn open_at(dir: i32, name: &CString, flags: i32, mode: u32) -> std::io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name; the fd returned is owned once.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn stat(path: &str, follow: bool) -> Message {
    let found = if follow {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    let meta = match found {
        Ok(meta) => meta,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
            return Message::Stat(Stat {
                kind: FileKind::Missing,
                size: 0,
                mtime_sec: 0,
                mtime_nsec: 0,
                mode: 0,
            })
        }
        Err(e) => return failed(&e, path),
    };
    let kind = if meta.is_file() {
        FileKind::File
    } else if meta.is_dir() {
        FileKind::Dir
    } else {
        FileKind::Other
    };
    Message::Stat(Stat {
        kind,
        size: meta.len(),
        mtime_sec: meta.mtime(),
        mtime_nsec: meta.mtime_nsec() as u32,
        mode: meta.mode() & 0o7777,
    })
}

/// Streams a regular file as `Data` frames and `End`; anything else is an error.
pub fn read(id: u32, path: &str, out: &FrameOut) {
    let opened = (|| -> std::io::Result<std::fs::File> {
        let held = open_at(libc::AT_FDCWD, &cstr(Path::new(path))?, libc::O_PATH, 0)?;
        let meta = std::fs::File::from(held.try_clone()?).metadata()?;
        if meta.is_dir() {
            return Err(errno(libc::EISDIR));
        }
        if !meta.is_file() {
            return Err(errno(libc::EINVAL));
        }
        // The held inode, opened for reading: nothing is resolved again.
        let again = CString::new(format!("/proc/self/fd/{}", held.as_raw_fd())).unwrap();
        Ok(std::fs::File::from(open_at(
            libc::AT_FDCWD,
            &again,
            libc::O_RDONLY,
            0,
        )?))
    })();
    let mut file = match opened {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            return out.send(
                id,
                &Message::Failed {
                    errno: libc::EINVAL,
                    message: format!("'{path}': not a regular file"),
                },
            );
        }
        Err(e) => return out.send(id, &failed(&e, path)),
    };
    let mut buf = vec![0u8; CHUNK];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return out.send(id, &Message::End),
            Ok(n) => out.send(id, &Message::Data(buf[..n].to_vec())),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return out.send(id, &failed(&e, path)),
        }
    }
}

/// Where a write lands: a final symlink is followed (a dangling one to the file it names,
/// as Node's `writeFile` does). Returns the parent, the name and the mode to keep.
fn write_target(path: &str, umask: u32) -> std::io::Result<(PathBuf, PathBuf, u32)> {
    let mut target = PathBuf::from(path);
    for _ in 0..40 {
        let parent = target
            .parent()
            .ok_or_else(|| errno(libc::EISDIR))?
            .to_path_buf();
        let name = PathBuf::from(target.file_name().ok_or_else(|| errno(libc::EISDIR))?);
        match std::fs::symlink_metadata(&target) {
            Ok(meta) if meta.file_type().is_symlink() => {
                target = parent.join(std::fs::read_link(&target)?);
            }
            Ok(meta) if meta.is_dir() => return Err(errno(libc::EISDIR)),
            Ok(meta) if meta.is_file() => return Ok((parent, name, meta.mode() & 0o7777)),
            Ok(_) => return Err(errno(libc::EINVAL)),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                return Ok((parent, name, 0o666 & !umask))
            }
            Err(e) => return Err(e),
        }
    }
    Err(errno(libc::ELOOP))
}

/// A file being written: unnamed until it replaces the target (or named, and removed on
/// failure, where the file system has no `O_TMPFILE`).
struct Pending {
    dir: OwnedFd,
    name: CString,
    file: std::fs::File,
    named: Option<CString>,
}

impl Pending {
    fn open(parent: &Path, name: &Path, mode: u32) -> std::io::Result<Pending> {
        let dir = open_at(
            libc::AT_FDCWD,
            &cstr(parent)?,
            libc::O_PATH | libc::O_DIRECTORY,
            0,
        )?;
        let dot = CString::new(".").unwrap();
        let name = cstr(name)?;
        match open_at(
            dir.as_raw_fd(),
            &dot,
            libc::O_TMPFILE | libc::O_WRONLY,
            mode,
        ) {
            Ok(fd) => Ok(Pending {
                dir,
                name,
                file: fd.into(),
                named: None,
            }),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
                ) =>
            {
                let temp = CString::new(format!(
                    ".container-isolation-{}.tmp",
                    std::process::id() ^ rand_bits()
                ))
                .unwrap();
                let fd = open_at(
                    dir.as_raw_fd(),
                    &temp,
                    libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
                    mode,
                )?;
                Ok(Pending {
                    dir,
                    name,
                    file: fd.into(),
                    named: Some(temp),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Puts the data in place of the target.
    fn commit(mut self, mode: u32) -> std::io::Result<()> {
        self.file.flush()?;
        self.file
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
        let temp = match self.named.take() {
            Some(temp) => temp,
            None => {
                let temp =
                    CString::new(format!(".container-isolation-{}.tmp", rand_bits())).unwrap();
                let from =
                    CString::new(format!("/proc/self/fd/{}", self.file.as_raw_fd())).unwrap();
                // SAFETY: links our own unnamed file into the held directory.
                let rc = unsafe {
                    libc::linkat(
                        libc::AT_FDCWD,
                        from.as_ptr(),
                        self.dir.as_raw_fd(),
                        temp.as_ptr(),
                        libc::AT_SYMLINK_FOLLOW,
                    )
                };
                if rc != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                temp
            }
        };
        // SAFETY: renames within the held directory.
        let rc = unsafe {
            libc::renameat(
                self.dir.as_raw_fd(),
                temp.as_ptr(),
                self.dir.as_raw_fd(),
                self.name.as_ptr(),
            )
        };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), temp.as_ptr(), 0) };
            return Err(err);
        }
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(temp) = &self.named {
            // SAFETY: removes our own temporary name.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), temp.as_ptr(), 0) };
        }
    }
}

fn rand_bits() -> u32 {
    let mut bits = 0u32;
    // SAFETY: fills a u32 from the kernel's random source.
    unsafe { libc::getrandom((&mut bits as *mut u32).cast(), 4, 0) };
    bits
}

/// Receives a write's data and puts it in place; replies `Done` or `Failed`.
pub fn write(id: u32, path: &str, umask: u32, input: Receiver<WriteInput>, out: &FrameOut) {
    let written = (|| -> std::io::Result<bool> {
        let (parent, name, mode) = write_target(path, umask)?;
        let mut pending = Pending::open(&parent, &name, mode)?;
        loop {
            match input.recv() {
                Ok(WriteInput::Data(data)) => pending.file.write_all(&data)?,
                Ok(WriteInput::End) => return pending.commit(mode).map(|()| true),
                Ok(WriteInput::Abort) | Err(_) => return Ok(false),
            }
        }
    })();
    match written {
        Ok(true) => out.send(id, &Message::Done),
        Ok(false) => out.send(
            id,
            &Message::Failed {
                errno: libc::ECANCELED,
                message: format!("'{path}': write abandoned"),
            },
        ),
        Err(e) => {
            // Drain what is still coming, so that the host's data frames find their end.
            while let Ok(WriteInput::Data(_)) = input.recv() {}
            out.send(id, &failed(&e, path));
        }
    }
}

/// `mkdir -p` with Node's errors: an existing non-directory at the path is `EEXIST`, one on
/// the way `ENOTDIR`; a dangling symlink is `EEXIST`.
pub fn make_dirs(path: &str) -> Message {
    let target = PathBuf::from(path);
    let mut here = PathBuf::from("/");
    let parts: Vec<&OsStr> = target.iter().skip(1).collect();
    for (i, part) in parts.iter().enumerate() {
        here.push(part);
        let last = i + 1 == parts.len();
        match std::fs::metadata(&here) {
            Ok(meta) if meta.is_dir() => continue,
            Ok(_) => {
                return failed(
                    &errno(if last { libc::EEXIST } else { libc::ENOTDIR }),
                    path,
                )
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
            Err(e) => return failed(&e, path),
        }
        if std::fs::symlink_metadata(&here).is_ok() {
            return failed(&errno(libc::EEXIST), path);
        }
        match std::fs::create_dir(&here) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return failed(&e, path),
        }
    }
    Message::Done
}

pub fn read_dir(path: &str) -> Message {
    match std::fs::read_dir(path) {
        Ok(entries) => {
            let names: std::io::Result<Vec<String>> = entries
                .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect();
            match names {
                Ok(names) => Message::Names(names),
                Err(e) => failed(&e, path),
            }
        }
        Err(e) => failed(&e, path),
    }
}
