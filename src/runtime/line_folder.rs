//! The folder of a new container's direct line to its agent: `<base>/lines/<name>`, made by
//! this process (mode 0700, ours, every step checked as the agent's private copy is) and
//! bind-mounted read-only at `LINE_MOUNT`. The host binds its socket there when it starts
//! the agent (the agent room's `agent_line`); the container can connect to it but change
//! nothing in the folder. Made only where the agent is bind-mounted too (a local engine on
//! Linux); removed with the container.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use bollard::models::{ContainerCreateBody, Mount, MountType};

use super::engine_answers::LINE_MOUNT;
use super::labels::{CLONE_PATH, POOL};

#[derive(Debug, Clone)]
pub struct LineFolder {
    pub path: PathBuf,
}

fn folder_of(base: &Path, name: &str) -> Option<PathBuf> {
    let plain = !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.contains('\0');
    plain.then(|| base.join("lines").join(name))
}

/// Whether `path` is a directory of ours that no one else may write.
fn private_dir(path: &Path, mode_mask: u32) -> bool {
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    std::fs::symlink_metadata(path)
        .is_ok_and(|meta| meta.is_dir() && meta.uid() == me && meta.mode() & mode_mask == 0)
}

impl LineFolder {
    /// Makes (or reuses, emptied of old sockets) the folder of container `name` under
    /// `base`; `None`, with a warning, where it cannot be made private.
    #[cfg(target_os = "linux")]
    pub fn make(base: &Path, name: &str) -> Option<LineFolder> {
        use std::os::unix::fs::DirBuilderExt;
        let path = folder_of(base, name)?;
        let lines = base.join("lines");
        let made = (|| {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&lines)?;
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
                _ => Ok(()),
            }
        })();
        let private = made.is_ok()
            && private_dir(base, 0o022)
            && private_dir(&lines, 0o022)
            && private_dir(&path, 0o077);
        if !private {
            tracing::warn!(
                "container '{name}': no direct line: {} is not a private folder",
                path.display()
            );
            return None;
        }
        for entry in std::fs::read_dir(&path).ok()?.flatten() {
            let _ = std::fs::remove_file(entry.path());
        }
        Some(LineFolder { path })
    }

    /// Off on macOS: the engine runs in a VM and the host's sockets are not its.
    #[cfg(not(target_os = "linux"))]
    pub fn make(_base: &Path, _name: &str) -> Option<LineFolder> {
        None
    }

    /// Adds the read-only mount to a create request.
    pub fn apply(&self, body: &mut ContainerCreateBody) {
        let mount = Mount {
            target: Some(LINE_MOUNT.to_string()),
            source: Some(self.path.to_string_lossy().into_owned()),
            typ: Some(MountType::BIND),
            read_only: Some(true),
            ..Default::default()
        };
        if let Some(host) = body.host_config.as_mut() {
            host.mounts.get_or_insert_with(Vec::new).push(mount);
        }
    }

    /// Removes the folders of a container named `name` with `labels`: its own and, for a
    /// warm pool's member since claimed (renamed to its session's name, its labels fixed at
    /// creation), the one made under its member name, which its clone-path label names.
    pub fn remove_for<'a>(base: &Path, name: &str, label: impl Fn(&str) -> Option<&'a str>) {
        Self::remove(base, name);
        if label(POOL).is_some() {
            let member = label(CLONE_PATH)
                .and_then(|p| Path::new(p).file_name())
                .and_then(|n| n.to_str());
            if let Some(member) = member.filter(|m| *m != name) {
                Self::remove(base, member);
            }
        }
    }

    /// Removes the folder of container `name` (and any socket left in it), if there is one.
    pub fn remove(base: &Path, name: &str) {
        let Some(path) = folder_of(base, name) else {
            return;
        };
        if private_dir(&path, 0o077) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_folder_of_ours_mounted_read_only_and_removed() {
        let base = std::env::temp_dir().join(format!("line-folder-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        let folder = LineFolder::make(&base, "ci-1234").unwrap();
        let meta = std::fs::metadata(&folder.path).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o700);
        let mut body = ContainerCreateBody {
            host_config: Some(Default::default()),
            ..Default::default()
        };
        folder.apply(&mut body);
        let mount = &body.host_config.unwrap().mounts.unwrap()[0];
        assert_eq!(mount.target.as_deref(), Some(LINE_MOUNT));
        assert_eq!(mount.read_only, Some(true));
        LineFolder::remove(&base, "ci-1234");
        assert!(!folder.path.exists());
        assert!(LineFolder::make(&base, "../x").is_none());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
