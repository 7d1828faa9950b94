//! An archive entry's name as the components it may be written at: relative, without `..`,
//! with `strip` leading components dropped (the archived directory's own name).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// Why an entry name is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    Absolute,
    ParentDir,
    Nul,
}

/// The components to write at; empty for the archive's root itself.
pub fn entry_components(path: &Path, strip: usize) -> Result<Vec<CString>, Refused> {
    let mut parts = Vec::new();
    for component in path.components() {
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
        let ok = entry_components(Path::new("./workspace/a/b.txt"), 1).unwrap();
        assert_eq!(
            ok,
            vec![CString::new("a").unwrap(), CString::new("b.txt").unwrap()]
        );
        assert!(entry_components(Path::new("workspace"), 1)
            .unwrap()
            .is_empty());
        assert_eq!(
            entry_components(Path::new("/etc/passwd"), 0),
            Err(Refused::Absolute)
        );
        assert_eq!(
            entry_components(Path::new("w/../../x"), 1),
            Err(Refused::ParentDir)
        );
    }
}
