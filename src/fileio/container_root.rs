//! The container's own root directory as this process can reach it: through the
//! container's main process, `/proc/<pid>/root`. A path resolved from there crosses the
//! container's mounts, not the host's, so the answer is the container's by construction.
//!
//! The `/proc/<pid>` directory is held open and checked once (its cgroup names the
//! container); the root is opened again from it for every operation. Once that process is
//! gone (the container stopped, or was recreated under the same name), the open fails
//! instead of reaching a recycled pid or a file system no container uses any more.
//!
//! The held descriptor closes with the container, not with the JavaScript objects that
//! hold it: every root opened is listed by the container's engine id, and `close_roots`
//! (a stop or a removal through this library) closes them at once. An operation that is
//! using the descriptor at that moment keeps it until it returns; later ones find it
//! closed, as they would a process that is gone.
//!
//! Linux only. Off on macOS by design: there is no `/proc`, and the engine (Docker
//! Desktop's) runs in a VM whose processes and file systems the Mac cannot see; there the
//! session agent or the engine answers every file operation, and `open` is always `None`.

use std::ffi::CString;
#[cfg(target_os = "linux")]
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use super::fd_ops::HOLD_DIR;

/// The `/proc/<pid>` directory of a container's main process, until the container's end.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
struct ProcDir {
    engine_id: String,
    fd: Mutex<Option<Arc<OwnedFd>>>,
}

impl ProcDir {
    fn held(&self) -> std::io::Result<Arc<OwnedFd>> {
        let fd = self.fd.lock().unwrap_or_else(|e| e.into_inner()).clone();
        fd.ok_or_else(|| std::io::Error::from_raw_os_error(libc::ESRCH))
    }
}

fn open_dirs() -> &'static Mutex<Vec<Weak<ProcDir>>> {
    static OPEN: OnceLock<Mutex<Vec<Weak<ProcDir>>>> = OnceLock::new();
    OPEN.get_or_init(Default::default)
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn listed(engine_id: &str, fd: OwnedFd) -> Arc<ProcDir> {
    let dir = Arc::new(ProcDir {
        engine_id: engine_id.to_string(),
        fd: Mutex::new(Some(Arc::new(fd))),
    });
    let mut open = open_dirs().lock().unwrap_or_else(|e| e.into_inner());
    open.retain(|d| d.strong_count() > 0);
    open.push(Arc::downgrade(&dir));
    dir
}

/// Closes every root held for the containers whose engine ids are among `ids`.
pub fn close_roots(ids: &[&str]) {
    let mut open = open_dirs().lock().unwrap_or_else(|e| e.into_inner());
    open.retain(|weak| {
        let Some(dir) = weak.upgrade() else {
            return false;
        };
        if !ids.iter().any(|id| !id.is_empty() && *id == dir.engine_id) {
            return true;
        }
        dir.fd.lock().unwrap_or_else(|e| e.into_inner()).take();
        false
    });
}

#[derive(Clone)]
pub struct ContainerRoot {
    proc_dir: Arc<ProcDir>,
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
        let (proc_dir, same_ids) = Self::of_process(pid)?;
        if !read_proc(proc_dir.as_raw_fd(), "cgroup")?.contains(container_id) {
            return None;
        }
        Some(ContainerRoot {
            proc_dir: listed(container_id, proc_dir),
            same_ids,
        })
    }

    /// Off on macOS (see the module's comment).
    #[cfg(not(target_os = "linux"))]
    pub fn open(_pid: u32, _container_id: &str) -> Option<ContainerRoot> {
        None
    }

    /// The process's `/proc/<pid>` directory, and whether ids mean the same there as here.
    #[cfg(target_os = "linux")]
    fn of_process(pid: u32) -> Option<(OwnedFd, bool)> {
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
        Some((proc_dir, same_ids))
    }

    /// Whether the container's main process still runs.
    pub fn alive(&self) -> bool {
        self.open_root().is_ok()
    }

    /// The container's root directory, as an `O_PATH` descriptor to resolve paths beneath.
    pub fn open_root(&self) -> std::io::Result<OwnedFd> {
        open_in(self.proc_dir.held()?.as_raw_fd(), "root", HOLD_DIR)
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
        let (dir, same_ids) = ContainerRoot::of_process(child.id()).unwrap();
        let root = ContainerRoot {
            proc_dir: listed("engine-id-of-a-sleep", dir),
            same_ids,
        };
        assert!(root.same_ids);
        assert!(root.alive());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!root.alive());
    }

    #[test]
    fn closing_a_container_closes_its_roots_held_anywhere() {
        let fd = |name: &str| open_in(libc::AT_FDCWD, name, libc::O_RDONLY).unwrap();
        let held = ContainerRoot {
            proc_dir: listed("c-one", fd("/proc/self")),
            same_ids: true,
        };
        let other = ContainerRoot {
            proc_dir: listed("c-two", fd("/proc/self")),
            same_ids: true,
        };
        let copy = held.clone();
        assert!(copy.alive());
        close_roots(&["c-one"]);
        assert!(!held.alive() && !copy.alive());
        assert!(other.alive());
        close_roots(&["c-two"]);
    }
}
