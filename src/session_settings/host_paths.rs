//! Host paths a session's container is given, checked so that nothing the session controls
//! redirects them.
//!
//! A bind source inside the session clone is walked from the clone's root one component at
//! a time without following a symlink, creating what is missing; the walk runs before every
//! start of the container, because the engine resolves the path again at each start and the
//! agent can replace any directory of its clone with a symlink while the container runs.
//! A source outside the clone must exist; it is canonicalised and must lie under a path
//! the host trusts.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use crate::engine::{candidates, DetectionEnv, Endpoint, Engine, EngineOptions};
use crate::fileio::fd_ops::HOLD_DIR;

/// Where a bind mount's source is.
pub enum HostPlace {
    /// Inside the session clone, this far below its root (empty: the root itself).
    InClone(PathBuf),
    /// Elsewhere on the host: the canonical path.
    Outside(PathBuf),
}

/// `path` with `.` and `..` folded, without touching the file system; `None` when it is
/// not absolute.
pub fn lexical(path: &Path) -> Option<PathBuf> {
    if !path.is_absolute() {
        return None;
    }
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// Classifies `source` (absolute) against the clone. An outside path is canonicalised,
/// which requires it to exist.
pub fn place(clone: &Path, source: &Path) -> std::io::Result<HostPlace> {
    let source = lexical(source).ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    match source.strip_prefix(clone) {
        Ok(rest) => Ok(HostPlace::InClone(rest.to_path_buf())),
        Err(_) => Ok(HostPlace::Outside(std::fs::canonicalize(&source)?)),
    }
}

/// Whether the canonical `path` lies at or under one of `trusted` (each canonicalised; a
/// trusted path that does not exist trusts nothing).
pub fn is_trusted(path: &Path, trusted: &[PathBuf]) -> bool {
    trusted
        .iter()
        .filter_map(|t| std::fs::canonicalize(t).ok())
        .any(|t| path.starts_with(t))
}

/// Whether mounting the canonical `path` gives the container one of `sockets` (the path is
/// a socket itself or a directory above one).
pub fn reaches_socket(path: &Path, sockets: &[PathBuf]) -> bool {
    sockets
        .iter()
        .filter_map(|s| std::fs::canonicalize(s).ok())
        .any(|s| s.starts_with(path))
}

/// Sockets whose mount would hand a container an engine: the connected engine's, and
/// every one auto-detection would try (another engine on this host is as dangerous).
pub fn engine_sockets(engine: &Engine) -> Vec<PathBuf> {
    let mut sockets = local_engine_sockets();
    sockets.extend(engine.tunnel_socket().map(Path::to_path_buf));
    if let Endpoint::Unix(path) = engine.endpoint() {
        sockets.push(path.clone());
    }
    sockets
}

/// The sockets auto-detection would try on this host, without an engine at hand.
pub fn local_engine_sockets() -> Vec<PathBuf> {
    // The sockets of the `default` context too, which a missing docker context cannot
    // turn into an error (and so into an empty list).
    let local_only = EngineOptions {
        context: Some("default".into()),
        ..Default::default()
    };
    let env = DetectionEnv::from_process();
    let mut sockets: Vec<PathBuf> = [&EngineOptions::default(), &local_only]
        .into_iter()
        .flat_map(|opts| candidates(opts, &env).unwrap_or_default())
        .filter_map(|c| match c.endpoint {
            Endpoint::Unix(path) => Some(path),
            _ => None,
        })
        .collect();
    sockets.push(PathBuf::from("/run/containerd/containerd.sock"));
    sockets
}

fn open_dir_at(dir: libc::c_int, name: &CString) -> std::io::Result<OwnedFd> {
    // SAFETY: a NUL-terminated name; the fd returned is owned once.
    let fd = unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            HOLD_DIR | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Checks that `relative` below `clone` is a directory reached through directories only
/// (no symlink anywhere), making what is missing; the final component may be a regular
/// file (a single-file mount). `Err` says which component is not a plain directory.
pub fn verify_in_clone(clone: &Path, relative: &Path) -> std::io::Result<()> {
    let root = CString::new(clone.as_os_str().as_encoded_bytes())?;
    let mut dir = open_dir_at(libc::AT_FDCWD, &root)?;
    let names: Vec<_> = relative.components().collect();
    for (i, part) in names.iter().enumerate() {
        let Component::Normal(name) = part else {
            return Err(std::io::Error::other(format!(
                "'{}' is not a plain path inside the clone",
                relative.display()
            )));
        };
        let name = CString::new(name.as_encoded_bytes())?;
        let last = i + 1 == names.len();
        dir = match open_dir_at(dir.as_raw_fd(), &name) {
            Ok(next) => next,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                // SAFETY: makes one name inside a held directory.
                if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o755) } < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                open_dir_at(dir.as_raw_fd(), &name)?
            }
            Err(e) if last && e.raw_os_error() == Some(libc::ENOTDIR) => {
                return regular_file_at(dir.as_raw_fd(), &name, relative);
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                return Err(std::io::Error::other(format!(
                    "'{}' in the session clone is a symlink or not a directory",
                    part.as_os_str().to_string_lossy()
                )));
            }
            Err(e) => return Err(e),
        };
    }
    Ok(())
}

/// A final component that is not a directory must be a regular file (not a symlink).
fn regular_file_at(dir: libc::c_int, name: &CString, relative: &Path) -> std::io::Result<()> {
    // SAFETY: st is a properly sized out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if st.st_mode & libc::S_IFMT == libc::S_IFREG {
        return Ok(());
    }
    Err(std::io::Error::other(format!(
        "'{}' in the session clone is a symlink or special file",
        relative.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_the_clone_symlinks_are_refused_and_missing_directories_made() {
        let clone = std::env::temp_dir().join(format!("ci-hp-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(clone.join("real")).unwrap();
        std::fs::write(clone.join("real/file"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", clone.join("link")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", clone.join("real/filelink")).unwrap();
        assert!(verify_in_clone(&clone, Path::new("real/made/deeper")).is_ok());
        assert!(clone.join("real/made/deeper").is_dir());
        assert!(verify_in_clone(&clone, Path::new("real/file")).is_ok());
        assert!(verify_in_clone(&clone, Path::new("")).is_ok());
        for bad in ["link", "link/sub", "real/filelink", "real/file/below"] {
            assert!(verify_in_clone(&clone, Path::new(bad)).is_err(), "{bad}");
        }
        assert!(!Path::new("/etc/sub").exists());
        std::fs::remove_dir_all(&clone).unwrap();
    }

    #[test]
    fn places_and_trust() {
        let clone = Path::new("/base/sessions/session-a");
        match place(clone, Path::new("/base/sessions/session-a/x/../y")).unwrap() {
            HostPlace::InClone(rest) => assert_eq!(rest, Path::new("y")),
            HostPlace::Outside(_) => panic!("inside"),
        }
        match place(clone, Path::new("/base/sessions/session-a/../../../etc")).unwrap() {
            HostPlace::Outside(p) => assert_eq!(p, Path::new("/etc")),
            HostPlace::InClone(_) => panic!("outside"),
        }
        assert!(place(clone, Path::new("/no/such/dir")).is_err());
        assert!(is_trusted(Path::new("/etc/ssl"), &[PathBuf::from("/etc")]));
        assert!(!is_trusted(
            Path::new("/etcetera"),
            &[PathBuf::from("/etc")]
        ));
        assert!(!is_trusted(Path::new("/etc"), &[PathBuf::from("/no/such")]));
        assert!(reaches_socket(
            Path::new("/"),
            &[PathBuf::from("/etc/hostname")]
        ));
        assert!(!reaches_socket(
            Path::new("/tmp"),
            &[PathBuf::from("/etc/hostname")]
        ));
    }
}
