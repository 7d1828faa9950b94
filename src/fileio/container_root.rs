//! The container's own root directory as this process can reach it: through the
//! container's main process, `/proc/<pid>/root`. A path resolved from there crosses the
//! container's mounts, not the host's, so the answer is the container's by construction.
//!
//! The `/proc/<pid>` directory is held open and checked once (its cgroup names the
//! container); the root is opened again from it for every operation. Once that process is
//! gone (the container stopped, or was recreated under the same name), the open fails
//! instead of reaching a recycled pid or a file system no container uses any more.
//!
//! Linux only. Off on macOS by design: there is no `/proc`, and the engine (Docker
//! Desktop's) runs in a VM whose processes and file systems the Mac cannot see; there the
//! session agent or the engine answers every file operation, and `open` is always `None`.

use std::ffi::CString;
#[cfg(target_os = "linux")]
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use super::fd_ops::HOLD_DIR;

#[derive(Clone)]
pub struct ContainerRoot {
    proc_dir: Arc<OwnedFd>,
    /// Uids and gids mean the same here and in the container (no user namespace between).
    pub same_ids: bool,
}

fn open_in(dir: libc::c_int, name: &str, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    let name = CString::new(name).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: a NUL-terminated name; the returned fd is owned exactly once.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A small procfs file, read through an fd (bounded: these are a few lines at most).
#[cfg(target_os = "linux")]
fn read_proc(dir: libc::c_int, name: &str) -> Option<String> {
    let file = open_in(dir, name, libc::O_RDONLY).ok()?;
    let mut text = String::new();
    std::fs::File::from(file)
        .take(64 * 1024)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

#[cfg(target_os = "linux")]
fn id_map(text: &str) -> Vec<Vec<&str>> {
    text.lines()
        .map(|line| line.split_whitespace().collect())
        .collect()
}

impl ContainerRoot {
    /// `None` when host process `pid` is not visible here or is not in `container_id`.
    #[cfg(target_os = "linux")]
    pub fn open(pid: u32, container_id: &str) -> Option<ContainerRoot> {
        if container_id.is_empty() {
            return None;
        }
        let root = Self::of_process(pid)?;
        read_proc(root.proc_dir.as_raw_fd(), "cgroup")?
            .contains(container_id)
            .then_some(root)
    }

    /// Off on macOS (see the module's comment).
    #[cfg(not(target_os = "linux"))]
    pub fn open(_pid: u32, _container_id: &str) -> Option<ContainerRoot> {
        None
    }

    #[cfg(target_os = "linux")]
    fn of_process(pid: u32) -> Option<ContainerRoot> {
        if pid == 0 {
            return None;
        }
        let proc_dir = open_in(
            libc::AT_FDCWD,
            &format!("/proc/{pid}"),
            libc::O_RDONLY | libc::O_DIRECTORY,
        )
        .ok()?;
        let dir = proc_dir.as_raw_fd();
        let same = |map: &str| match (
            read_proc(dir, map),
            read_proc(libc::AT_FDCWD, &format!("/proc/self/{map}")),
        ) {
            (Some(theirs), Some(ours)) => id_map(&theirs) == id_map(&ours),
            _ => false,
        };
        let same_ids = same("uid_map") && same("gid_map");
        Some(ContainerRoot {
            proc_dir: Arc::new(proc_dir),
            same_ids,
        })
    }

    /// Whether the container's main process still runs.
    pub fn alive(&self) -> bool {
        self.open_root().is_ok()
    }

    /// The container's root directory, as an `O_PATH` descriptor to resolve paths beneath.
    pub fn open_root(&self) -> std::io::Result<OwnedFd> {
        open_in(self.proc_dir.as_raw_fd(), "root", HOLD_DIR)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn our_own_process_is_not_a_container() {
        assert!(ContainerRoot::open(std::process::id(), "0123456789abcdef").is_none());
        assert!(ContainerRoot::open(0, "x").is_none());
        assert_eq!(
            id_map("         0          0 4294967295\n"),
            vec![vec!["0", "0", "4294967295"]]
        );
    }

    #[test]
    fn a_process_that_exited_is_not_alive() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let root = ContainerRoot::of_process(child.id()).unwrap();
        assert!(root.same_ids);
        assert!(root.alive());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!root.alive());
    }
}
