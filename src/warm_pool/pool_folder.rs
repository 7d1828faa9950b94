//! A pool member's clone folder, `<base>/pool/<member>`: made empty before the member that
//! mounts it; at a claim, the session's clone is moved into it (its entries renamed in,
//! never replacing anything the container put there) and the folder put at the clone's
//! path in one exchange, a link left at its old path — the source the member's mount names
//! at each later start. Every parent on these paths is ours; only the folders' contents are
//! the container's.

use std::io;
use std::path::{Path, PathBuf};

/// Where a base directory's member folders live.
pub fn folders_dir(base_dir: &Path) -> PathBuf {
    base_dir.join("pool")
}

/// Makes the empty folder of member `name`.
pub fn make_folder(base_dir: &Path, name: &str) -> io::Result<PathBuf> {
    let dir = folders_dir(base_dir);
    std::fs::create_dir_all(&dir)?;
    let folder = dir.join(name);
    std::fs::create_dir(&folder)?;
    Ok(folder)
}

/// Removes a member's folder (with whatever its container wrote there), or the link a claim
/// left in its place; never fails.
pub fn remove_folder(folder: &Path) {
    match std::fs::symlink_metadata(folder) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let _ = std::fs::remove_file(folder);
        }
        Ok(_) => {
            let _ = std::fs::remove_dir_all(folder);
        }
        Err(_) => {}
    }
}

/// Removes the links claims left whose session clone is gone (the session destroyed).
pub fn sweep_links(base_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(folders_dir(base_dir)) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        if is_link && std::fs::metadata(&path).is_err() {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Moves the clone at `clone` into `folder` and puts `folder` at `clone`'s path (the old,
/// emptied clone directory removed and a link to the clone left at `folder`'s path). On an
/// error the clone is where it was, whole.
#[cfg(target_os = "linux")]
pub fn place_clone(clone: &Path, folder: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;

    if std::fs::read_dir(folder)?.next().is_some() {
        return Err(io::Error::other(
            "the member's folder is not empty (its container wrote to it)",
        ));
    }
    let from = open_dir(clone)?;
    let into = open_dir(folder)?;
    let names: Vec<_> = std::fs::read_dir(clone)?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<io::Result<_>>()?;
    let mut moved: Vec<std::ffi::OsString> = Vec::new();
    for name in &names {
        if let Err(err) = rename_at(&from, &into, name, libc::RENAME_NOREPLACE) {
            for back in moved.iter().rev() {
                let _ = rename_at(&into, &from, back, libc::RENAME_NOREPLACE);
            }
            return Err(err);
        }
        moved.push(name.clone());
    }
    let mode = std::fs::metadata(clone)?.permissions().mode();
    let _ = std::fs::set_permissions(folder, std::fs::Permissions::from_mode(mode));
    if let Err(err) = crate::fileio::fd_ops::swap_paths(clone, folder) {
        for back in moved.iter().rev() {
            let _ = rename_at(&into, &from, back, libc::RENAME_NOREPLACE);
        }
        return Err(err);
    }
    // `folder` is now the emptied old clone directory.
    std::fs::remove_dir(folder)?;
    std::os::unix::fs::symlink(clone, folder)
}

/// Elsewhere the clone stays where it is and the session is created without the pool.
#[cfg(not(target_os = "linux"))]
pub fn place_clone(_clone: &Path, _folder: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "a clone is moved into a member's folder on Linux only",
    ))
}

#[cfg(target_os = "linux")]
fn open_dir(path: &Path) -> io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
}

#[cfg(target_os = "linux")]
fn rename_at(
    from: &std::fs::File,
    into: &std::fs::File,
    name: &std::ffi::OsStr,
    flags: libc::c_uint,
) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(name.as_bytes()).map_err(io::Error::other)?;
    // SAFETY: both descriptors are open directories; `name` is NUL-terminated.
    let rc = unsafe {
        libc::renameat2(
            from.as_raw_fd(),
            name.as_ptr(),
            into.as_raw_fd(),
            name.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ci-pool-folder-{tag}-{}",
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_clone_moves_into_the_folder_which_takes_its_place() {
        let base = scratch("place");
        let clone = base.join("sessions").join("session-s1");
        std::fs::create_dir_all(clone.join(".git")).unwrap();
        std::fs::write(clone.join("a.txt"), "a").unwrap();
        let folder = make_folder(&base, "wp-x").unwrap();
        let folder_inode =
            std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&folder).unwrap());
        place_clone(&clone, &folder).unwrap();
        let placed = std::fs::metadata(&clone).unwrap();
        assert_eq!(std::os::unix::fs::MetadataExt::ino(&placed), folder_inode);
        assert_eq!(std::fs::read_to_string(clone.join("a.txt")).unwrap(), "a");
        assert!(clone.join(".git").is_dir());
        assert_eq!(std::fs::read_link(&folder).unwrap(), clone);
        assert_eq!(std::fs::read_to_string(folder.join("a.txt")).unwrap(), "a");
        std::fs::remove_dir_all(&clone).unwrap();
        sweep_links(&base);
        assert!(std::fs::symlink_metadata(&folder).is_err());
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn a_folder_the_container_wrote_to_is_refused_and_the_clone_stays() {
        let base = scratch("refuse");
        let clone = base.join("sessions").join("session-s2");
        std::fs::create_dir_all(&clone).unwrap();
        std::fs::write(clone.join("a.txt"), "a").unwrap();
        let folder = make_folder(&base, "wp-y").unwrap();
        std::os::unix::fs::symlink("/", folder.join("a.txt")).unwrap();
        assert!(place_clone(&clone, &folder).is_err());
        assert_eq!(std::fs::read_to_string(clone.join("a.txt")).unwrap(), "a");
        assert!(std::fs::symlink_metadata(folder.join("a.txt"))
            .unwrap()
            .file_type()
            .is_symlink());
        remove_folder(&folder);
        assert!(!folder.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
