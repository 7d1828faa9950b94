//! A session clone's object files made its own. libgit2's local clone hard-links the
//! project's object files; the clone is bind-mounted writable into an untrusted container,
//! which could then truncate or re-own the project's own packs through them. Each file
//! with another link is replaced by a copy renamed over it (`std::fs::copy`: an in-kernel
//! `copy_file_range`, which shares blocks — a reflink — where the file system can, and a
//! clone on APFS), before the clone is renamed into place, so no container ever sees a
//! shared inode.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Copies every regular file under `objects` that has more than one link; returns how
/// many. Symlinks are neither followed nor copied.
pub fn unshare_objects(objects: &Path) -> std::io::Result<usize> {
    let mut copied = 0;
    let mut pending = vec![objects.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let meta = std::fs::symlink_metadata(entry.path())?;
            if meta.is_dir() {
                pending.push(entry.path());
            } else if meta.is_file() && meta.nlink() > 1 {
                let path = entry.path();
                let mut temp = path.clone().into_os_string();
                temp.push(".unshared");
                std::fs::copy(&path, &temp)?;
                std::fs::rename(&temp, &path)?;
                copied += 1;
            }
        }
    }
    Ok(copied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linked_files_become_copies_with_the_same_content_and_mode() {
        use std::os::unix::fs::PermissionsExt;
        let root = std::env::temp_dir().join(format!("ci-oc-{}", uuid::Uuid::new_v4()));
        let (outside, objects) = (root.join("project"), root.join("objects"));
        std::fs::create_dir_all(objects.join("pack")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("a.pack"), "pack bytes").unwrap();
        std::fs::set_permissions(
            outside.join("a.pack"),
            std::fs::Permissions::from_mode(0o444),
        )
        .unwrap();
        std::fs::hard_link(outside.join("a.pack"), objects.join("pack/a.pack")).unwrap();
        std::fs::write(objects.join("own"), "own").unwrap();
        assert_eq!(unshare_objects(&objects).unwrap(), 1);
        let copy = std::fs::metadata(objects.join("pack/a.pack")).unwrap();
        let original = std::fs::metadata(outside.join("a.pack")).unwrap();
        assert_ne!(copy.ino(), original.ino());
        assert_eq!((copy.nlink(), original.nlink()), (1, 1));
        assert_eq!(copy.mode() & 0o777, 0o444);
        assert_eq!(
            std::fs::read(objects.join("pack/a.pack")).unwrap(),
            b"pack bytes"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
