//! The archive extractor (`tar_extract::extract`) on any bytes, into a fresh directory
//! beside a sentinel one: nothing is ever written outside the target (through `..`, a
//! symlink, or a name from `/`), the counts stay within the limits, and an archive it
//! accepts leaves exactly what the `tar` crate lists in it (regular files with their
//! bytes, directories, symlinks as links; a later entry of a name replacing an earlier).
//! The first byte picks how many leading components are stripped.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::tar_extract::{extract, ExtractLimits};

const LIMITS: ExtractLimits = ExtractLimits {
    max_bytes: 64 * 1024,
    max_entries: 64,
};

#[derive(Debug, PartialEq, Eq)]
enum Node {
    File(Vec<u8>),
    Dir,
    Link(Vec<u8>),
}

fn workspace_dir() -> PathBuf {
    std::env::temp_dir().join(format!("ci-fuzz-tar-{}", std::process::id()))
}

/// Removes the directory the checks of this process extracted into.
pub fn remove_workspace() {
    let _ = std::fs::remove_dir_all(workspace_dir());
}

/// A directory of this process's own, emptied: `t` the target, `o` the sentinel beside it.
fn workspace() -> PathBuf {
    let dir = workspace_dir();
    for sub in ["t", "o"] {
        let _ = std::fs::remove_dir_all(dir.join(sub));
        std::fs::create_dir_all(dir.join(sub)).expect("a scratch directory");
    }
    dir
}

/// What lies below `dir`, by path, read without following anything.
fn tree(dir: &Path, below: &Path, found: &mut BTreeMap<PathBuf, Node>) {
    for entry in std::fs::read_dir(dir).expect("a directory made by extract") {
        let entry = entry.unwrap();
        let (path, name) = (entry.path(), below.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            tree(&path, &name, found);
            found.insert(name, Node::Dir);
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&path).unwrap();
            found.insert(name, Node::Link(target.as_os_str().as_bytes().to_vec()));
        } else {
            assert!(kind.is_file(), "{} is not a file", name.display());
            found.insert(name, Node::File(std::fs::read(&path).unwrap()));
        }
    }
}

/// What the `tar` crate lists in `data`, as written below a target.
fn listed(data: &[u8], strip: usize) -> BTreeMap<PathBuf, Node> {
    let mut want = BTreeMap::new();
    let mut archive = tar::Archive::new(data);
    for entry in archive.entries().expect("an archive extract accepted") {
        let mut entry = entry.expect("an entry extract accepted");
        let name = entry.path().unwrap().into_owned();
        let rooted = name.has_root();
        let parts: Vec<_> = name
            .components()
            .filter(|c| matches!(c, Component::Normal(_)))
            .collect();
        let skip = if rooted { 0 } else { strip };
        let Some(path) = parts.get(skip..).filter(|p| !p.is_empty()) else {
            continue;
        };
        let path: PathBuf = path.iter().collect();
        let node = match entry.header().entry_type() {
            tar::EntryType::Directory => Node::Dir,
            tar::EntryType::Symlink => {
                Node::Link(entry.link_name_bytes().unwrap_or_default().into_owned())
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
                Node::File(bytes)
            }
            _ => continue,
        };
        // Every folder above the entry (the first ancestor is the entry itself).
        for parent in path
            .ancestors()
            .skip(1)
            .filter(|p| !p.as_os_str().is_empty())
        {
            want.insert(parent.to_path_buf(), Node::Dir);
        }
        want.insert(path, node);
    }
    want
}

pub fn check_tar_extract(data: &[u8]) {
    let Some((first, archive)) = data.split_first() else {
        return;
    };
    let strip = usize::from(first % 3);
    let dir = workspace();
    let result = extract(archive, &dir.join("t"), strip, LIMITS);
    let mut sentinel = std::fs::read_dir(dir.join("o")).unwrap();
    assert!(
        sentinel.next().is_none(),
        "a write beside the target: {result:?}"
    );
    let beside: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(beside.len(), 2, "a write beside the target: {beside:?}");
    let mut found = BTreeMap::new();
    tree(&dir.join("t"), Path::new(""), &mut found);
    let Ok(done) = result else { return };
    assert!(done.bytes <= LIMITS.max_bytes);
    assert!(done.files + done.dirs + done.symlinks + done.skipped <= LIMITS.max_entries);
    assert_eq!(found, listed(archive, strip), "what was written ({done:?})");
}
