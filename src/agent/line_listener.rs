//! This host process's unix socket in one container's line folder (`host-<pid>.sock`),
//! for the direct line to its agent (`agent_line`): bound through the folder's descriptor
//! once the folder is found to be a private folder of this user, mode 0600, and removed
//! when dropped, if it is still the one in the folder. One offer at a time is negotiated
//! on it (`turn`): the agent's and the egress relay's never take each other's connection.

use std::os::fd::{AsRawFd, OwnedFd};

use tokio::net::UnixListener;

use crate::runtime::LINE_MOUNT;

/// This host process's socket in one container's line folder; removed when dropped.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct LineListener {
    folder: OwnedFd,
    name: String,
    pub(super) listener: UnixListener,
    /// The folder's host path, as the container's mount names it.
    pub source: String,
    /// The socket file's inode, to tell whether it is still the one in the folder.
    inode: u64,
    /// Held by the negotiation under way: the first connection it accepts is its own.
    pub(super) turn: tokio::sync::Mutex<()>,
}

impl LineListener {
    /// Listens in the folder at `source` (a host path), which must be a private folder of
    /// this process's user.
    #[cfg(target_os = "linux")]
    pub fn open(source: &str) -> Result<LineListener, String> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let folder = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(source)
            .map_err(|e| format!("the line's folder {source} could not be opened: {e}"))?;
        let meta = folder
            .metadata()
            .map_err(|e| format!("the line's folder {source}: {e}"))?;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if !meta.is_dir() || meta.uid() != me || meta.mode() & 0o077 != 0 {
            return Err(format!(
                "the line's folder {source} is not a private folder of this user"
            ));
        }
        let folder = OwnedFd::from(folder);
        let name = format!("host-{}.sock", std::process::id());
        let cname = std::ffi::CString::new(name.clone()).map_err(|_| "a NUL in a name")?;
        // SAFETY: a NUL-terminated name in a directory we hold; a stale socket of an earlier
        // process with our pid is all it can remove (the container cannot write there).
        unsafe { libc::unlinkat(folder.as_raw_fd(), cname.as_ptr(), 0) };
        let through = format!("/proc/self/fd/{}/{name}", folder.as_raw_fd());
        let listener = std::os::unix::net::UnixListener::bind(&through)
            .map_err(|e| format!("no socket could be made in the line's folder {source}: {e}"))?;
        // SAFETY: the name just bound in the directory we hold.
        unsafe { libc::fchmodat(folder.as_raw_fd(), cname.as_ptr(), 0o600, 0) };
        let listener = listener
            .set_nonblocking(true)
            .and_then(|_| UnixListener::from_std(listener))
            .map_err(|e| format!("the line's socket in {source}: {e}"))?;
        let inode = socket_inode(&folder, &cname).unwrap_or(0);
        Ok(LineListener {
            folder,
            name,
            listener,
            source: source.to_string(),
            inode,
            turn: tokio::sync::Mutex::new(()),
        })
    }

    /// Whether the folder still holds this listener's socket (a container made again under
    /// the same name, after one removed behind this library's back, empties its folder).
    pub fn in_place(&self) -> bool {
        let Ok(name) = std::ffi::CString::new(self.name.clone()) else {
            return false;
        };
        self.inode != 0 && socket_inode(&self.folder, &name) == Some(self.inode)
    }

    #[cfg(not(target_os = "linux"))]
    pub fn open(_source: &str) -> Result<LineListener, String> {
        Err("no direct line off Linux".into())
    }

    /// The socket's path inside the container.
    pub fn container_path(&self) -> String {
        format!("{LINE_MOUNT}/{}", self.name)
    }
}

/// The inode of the socket `name` in `folder`, not followed.
fn socket_inode(folder: &OwnedFd, name: &std::ffi::CStr) -> Option<u64> {
    // SAFETY: a zeroed stat is valid storage for fstatat to fill; a NUL-terminated name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let found = unsafe {
        libc::fstatat(
            folder.as_raw_fd(),
            name.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    (found == 0 && st.st_mode & libc::S_IFMT == libc::S_IFSOCK).then_some(st.st_ino as u64)
}

impl Drop for LineListener {
    fn drop(&mut self) {
        // Only our own socket: another listener of this process may have taken the name.
        if !self.in_place() {
            return;
        }
        if let Ok(name) = std::ffi::CString::new(self.name.clone()) {
            // SAFETY: a NUL-terminated name in the directory this listener holds.
            unsafe { libc::unlinkat(self.folder.as_raw_fd(), name.as_ptr(), 0) };
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn only_a_private_folder_of_ours_gets_a_socket() {
        let base = std::env::temp_dir().join(format!("line-listener-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let open = base.join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let private = base.join("private");
        std::fs::create_dir(&private).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = base.join("link");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let err = LineListener::open(open.to_str().unwrap()).err().unwrap();
            assert!(err.contains("not a private folder"), "{err}");
            assert!(LineListener::open(link.to_str().unwrap()).is_err());
            let listener = LineListener::open(private.to_str().unwrap()).unwrap();
            let socket = private.join(format!("host-{}.sock", std::process::id()));
            assert!(socket.exists());
            assert!(listener.in_place());
            std::fs::remove_file(&socket).unwrap();
            assert!(!listener.in_place());
            let listener = LineListener::open(private.to_str().unwrap()).unwrap();
            assert!(listener.in_place());
            assert!(listener.container_path().starts_with(LINE_MOUNT));
            drop(listener);
            assert!(!socket.exists());
        });
        std::fs::remove_dir_all(&base).unwrap();
    }
}
