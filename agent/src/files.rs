//! File operations inside the container, each on a thread of its own acting as the caller's
//! user (`creds::act_as`): stat, read, mkdir -p, readdir (writes are `write`'s). Only
//! regular files are read; a listing too long for one frame is sent in several.

use std::ffi::{CString, OsStr};
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use container_isolation_agent::protocol::{
    data_header, FileKind, Message, Stat, CHUNK, DATA_HEADER,
};

use super::frame_out::FrameOut;
use super::reply_window::Window;

/// How much of a path an error message quotes (a path may be nearly a frame long).
const QUOTED: usize = 1024;

pub fn failed(err: &std::io::Error, path: &str) -> Message {
    Message::Failed {
        errno: err.raw_os_error().unwrap_or(libc::EIO),
        message: format!("'{}': {err}", quoted(path)),
    }
}

/// `text`, cut to at most `QUOTED` bytes (on a character boundary).
pub fn quoted(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= QUOTED {
        return text.into();
    }
    let end = (0..=QUOTED)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}…", &text[..end]).into()
}

pub fn errno(code: i32) -> std::io::Error {
    std::io::Error::from_raw_os_error(code)
}

pub fn cstr(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| errno(libc::EINVAL))
}

pub fn open_at(dir: i32, name: &CString, flags: i32, mode: u32) -> std::io::Result<OwnedFd> {
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
pub fn read(id: u32, path: &str, out: &FrameOut, window: &Window) {
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
                    message: format!("'{}': not a regular file", quoted(path)),
                },
            );
        }
        Err(e) => return out.send(id, &failed(&e, path)),
    };
    loop {
        // Read straight into the frame that carries it (no zeroing, no copy).
        let mut frame = Vec::with_capacity(DATA_HEADER + CHUNK);
        frame.extend_from_slice(&[0; DATA_HEADER]);
        match (&mut file).take(CHUNK as u64).read_to_end(&mut frame) {
            Ok(0) => return out.send(id, &Message::End),
            Ok(n) => {
                if !window.spend(n as u32) {
                    return;
                }
                frame[..DATA_HEADER].copy_from_slice(&data_header(id, n));
                out.send_frame(frame);
            }
            Err(e) => return out.send(id, &failed(&e, path)),
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

/// Lists a directory as `Names` frames (at least one; each within a frame, however many
/// names there are) and `End`, or `Failed`.
pub fn read_dir(id: u32, path: &str, out: &FrameOut, window: &Window) {
    let entries = match std::fs::read_dir(path) {
        Ok(entries) => entries,
        Err(e) => return out.send(id, &failed(&e, path)),
    };
    let (mut names, mut size, mut sent) = (Vec::new(), 0, false);
    for entry in entries {
        let name = match entry {
            Ok(entry) => entry.file_name().to_string_lossy().into_owned(),
            Err(e) => return out.send(id, &failed(&e, path)),
        };
        // Each name costs its length and a length field.
        if size + 4 + name.len() > CHUNK {
            if !window.spend(size as u32) {
                return;
            }
            out.send(id, &Message::Names(std::mem::take(&mut names)));
            (size, sent) = (0, true);
        }
        size += 4 + name.len();
        names.push(name);
    }
    if !names.is_empty() || !sent {
        out.send(id, &Message::Names(names));
    }
    out.send(id, &Message::End);
}
