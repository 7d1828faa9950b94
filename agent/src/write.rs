//! Writing a whole file as the caller's user: the data goes to an unnamed temporary file
//! (`O_TMPFILE`, a named one where the file system lacks it) that replaces the target only
//! once all of it has arrived, so a reader or an interruption sees the old content or the
//! new, never a mix, and an abandoned write leaves nothing. A file that is replaced keeps
//! its mode and (as far as the caller may keep it) its owner, and is only replaced if the
//! caller could have written it in place, as `writeFile` would have. Temporary names record
//! their owner (`temp_names`): one left by an agent that died is removed by the next write
//! in its directory.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;

use container_isolation_agent::protocol::Message;
use container_isolation_agent::temp_names::{sweep_once, temp_name};

use super::files::{cstr, errno, failed, open_at};
use super::frame_out::FrameOut;

/// What a write's thread receives after its request: data, then the end or an abort.
pub enum WriteInput {
    Data(Vec<u8>),
    End,
    Abort,
}

/// Where a write lands and what the new file keeps of the old one.
struct Target {
    parent: PathBuf,
    name: PathBuf,
    mode: u32,
    /// The replaced file's owner and group.
    owner: Option<(u32, u32)>,
}

/// Where a write lands: a final symlink is followed (a dangling one to the file it names,
/// as Node's `writeFile` does). Only a regular file is replaced, and only one the caller
/// may write to.
fn write_target(path: &str, umask: u32) -> std::io::Result<Target> {
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
            Ok(meta) if meta.is_file() => {
                may_write(&target)?;
                return Ok(Target {
                    parent,
                    name,
                    mode: meta.mode() & 0o7777,
                    owner: Some((meta.uid(), meta.gid())),
                });
            }
            Ok(_) => return Err(errno(libc::EINVAL)),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                return Ok(Target {
                    parent,
                    name,
                    mode: 0o666 & !umask,
                    owner: None,
                })
            }
            Err(e) => return Err(e),
        }
    }
    Err(errno(libc::ELOOP))
}

/// Whether this thread's user may write `file` in place: opening it for writing (without
/// truncating) asks the kernel. A program being run is busy, but may still be replaced.
fn may_write(file: &Path) -> std::io::Result<()> {
    let flags = libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
    match open_at(libc::AT_FDCWD, &cstr(file)?, flags, 0) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => Ok(()),
        Err(e) => Err(e),
    }
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
        sweep_once(dir.as_raw_fd());
        let name = cstr(name)?;
        let dot = CString::new(".").unwrap();
        let flags = libc::O_TMPFILE | libc::O_WRONLY;
        let (fd, named) = match open_at(dir.as_raw_fd(), &dot, flags, mode) {
            Ok(fd) => (fd, None),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
                ) =>
            {
                let temp = temp_name();
                let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
                (open_at(dir.as_raw_fd(), &temp, flags, mode)?, Some(temp))
            }
            Err(e) => return Err(e),
        };
        Ok(Pending {
            dir,
            name,
            file: fd.into(),
            named,
        })
    }

    /// Gives an unnamed file a temporary name in the directory.
    fn link(&self) -> std::io::Result<CString> {
        let temp = temp_name();
        let from = CString::new(format!("/proc/self/fd/{}", self.file.as_raw_fd())).unwrap();
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
        Ok(temp)
    }

    /// Puts the data in place of the target.
    fn commit(mut self, target: &Target) -> std::io::Result<()> {
        self.file.flush()?;
        if let Some((uid, gid)) = target.owner {
            // Root keeps anyone's ownership; a user can keep only their own (EPERM else,
            // and the new file is theirs, as any file they create).
            // SAFETY: changes the owner of our own open file.
            unsafe { libc::fchown(self.file.as_raw_fd(), uid, gid) };
        }
        // After the owner: a change of owner clears set-id bits.
        self.file
            .set_permissions(std::fs::Permissions::from_mode(target.mode))?;
        let temp = match self.named.take() {
            Some(temp) => temp,
            None => self.link()?,
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

/// Receives a write's data and puts it in place; replies `Done` or `Failed`.
pub fn write(id: u32, path: &str, umask: u32, input: Receiver<WriteInput>, out: &FrameOut) {
    let written = (|| -> std::io::Result<bool> {
        let target = write_target(path, umask)?;
        let mut pending = Pending::open(&target.parent, &target.name, target.mode)?;
        loop {
            match input.recv() {
                Ok(WriteInput::Data(data)) => pending.file.write_all(&data)?,
                Ok(WriteInput::End) => return pending.commit(&target).map(|()| true),
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
