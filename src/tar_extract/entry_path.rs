//! An archive entry's name as the components it may be written at: relative, without `..`,
//! with `strip` leading components dropped (the archived directory's own name). Podman
//! names the entries of a stopped container's volume from `/` (the volume's root) instead:
//! in such a `rooted` archive every name must start at `/`, which then stands for the
//! target, and nothing is stripped.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// Why an entry name is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    Absolute,
    ParentDir,
    Nul,
    /// A relative name in an archive whose names start at `/`.
    Unrooted,
}

/// Whether an archive whose first entry is named `first` names its entries from `/`.
pub fn is_rooted(first: &Path) -> bool {
    first.as_os_str() == "/"
}

/// The components to write at; empty for the archive's root itself.
pub fn entry_components(path: &Path, strip: usize, rooted: bool) -> Result<Vec<CString>, Refused> {
    let mut parts = Vec::new();
    let mut components = path.components().peekable();
    if rooted {
        match components.next() {
            Some(Component::RootDir) => {}
            _ => return Err(Refused::Unrooted),
        }
    }
    let strip = if rooted { 0 } else { strip };
    for component in components {
        match component {
            Component::Normal(name) => {
                parts.push(CString::new(name.as_bytes()).map_err(|_| Refused::Nul)?)
            }
            Component::CurDir => {}
            Component::ParentDir => return Err(Refused::ParentDir),
            Component::RootDir | Component::Prefix(_) => return Err(Refused::Absolute),
        }
    }
    Ok(parts.into_iter().skip(strip).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_relative_and_stay_below() {
        let ok = entry_components(Path::new("./workspace/a/b.txt"), 1, false).unwrap();
        assert_eq!(
            ok,
            vec![CString::new("a").unwrap(), CString::new("b.txt").unwrap()]
        );
        assert!(entry_components(Path::new("workspace"), 1, false)
            .unwrap()
            .is_empty());
        assert_eq!(
            entry_components(Path::new("/etc/passwd"), 0, false),
            Err(Refused::Absolute)
        );
        assert_eq!(
            entry_components(Path::new("w/../../x"), 1, false),
            Err(Refused::ParentDir)
        );
    }

    #[test]
    fn a_rooted_archive_names_everything_from_the_target() {
        let ok = entry_components(Path::new("/d/y"), 1, true).unwrap();
        assert_eq!(
            ok,
            vec![CString::new("d").unwrap(), CString::new("y").unwrap()]
        );
        assert!(entry_components(Path::new("/"), 1, true)
            .unwrap()
            .is_empty());
        assert_eq!(
            entry_components(Path::new("d/y"), 1, true),
            Err(Refused::Unrooted)
        );
        assert_eq!(
            entry_components(Path::new("/d/../../y"), 1, true),
            Err(Refused::ParentDir)
        );
    }
}
