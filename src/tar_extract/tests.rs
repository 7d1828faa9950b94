//! The extractor against hostile archives: escapes by name, by symlink and by size.

use std::path::Path;

use tar::{EntryType, Header};

use super::{extract, ExtractLimits};
use crate::error::ErrorCode;

/// A header whose name is written raw (the builder would refuse these names).
fn header(name: &str, kind: EntryType, size: u64) -> Header {
    let mut h = Header::new_gnu();
    let bytes = name.as_bytes();
    h.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
    h.set_entry_type(kind);
    h.set_size(size);
    h.set_mode(0o644);
    h.set_cksum();
    h
}

fn archive(entries: &[(&str, EntryType, &[u8], Option<&str>)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, kind, data, link) in entries {
        let mut h = header(name, *kind, data.len() as u64);
        if let Some(link) = link {
            h.set_link_name(link).unwrap();
            h.set_cksum();
        }
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap()
}

struct Scratch(std::path::PathBuf);

impl Scratch {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fresh() -> (Scratch, std::path::PathBuf) {
    let outer = std::env::temp_dir().join(format!("ci-tar-{}", uuid::Uuid::new_v4().simple()));
    let target = outer.join("target");
    std::fs::create_dir_all(&target).unwrap();
    (Scratch(outer), target)
}

fn only_target_written(outer: &Path) {
    let names: Vec<_> = std::fs::read_dir(outer)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("target")]);
}

#[test]
fn files_dirs_and_symlinks_land_below_the_target() {
    let (outer, target) = fresh();
    let tar = archive(&[
        ("w/", EntryType::Directory, b"", None),
        ("w/a/", EntryType::Directory, b"", None),
        ("w/a/f.txt", EntryType::Regular, b"hello", None),
        ("w/link", EntryType::Symlink, b"", Some("/etc/passwd")),
        ("w/fifo", EntryType::Fifo, b"", None),
        ("w/hard", EntryType::Link, b"", Some("w/a/f.txt")),
    ]);
    let done = extract(&tar[..], &target, 1, ExtractLimits::default()).unwrap();
    assert_eq!(
        (done.files, done.dirs, done.symlinks, done.skipped),
        (1, 1, 1, 2)
    );
    assert_eq!(std::fs::read(target.join("a/f.txt")).unwrap(), b"hello");
    let link = std::fs::symlink_metadata(target.join("link")).unwrap();
    assert!(link.file_type().is_symlink());
    assert!(!target.join("fifo").exists() && !target.join("hard").exists());
    only_target_written(outer.path());
}

#[test]
fn parent_dir_and_absolute_names_are_refused() {
    for name in ["w/../../escape", "/abs/escape"] {
        let (outer, target) = fresh();
        let tar = archive(&[(name, EntryType::Regular, b"x", None)]);
        let err = extract(&tar[..], &target, 1, ExtractLimits::default()).unwrap_err();
        assert_eq!(err.code, ErrorCode::Eacces, "{name}: {}", err.message);
        only_target_written(outer.path());
    }
}

#[test]
fn a_file_through_a_symlinked_parent_is_refused() {
    let (outer, target) = fresh();
    let outside = outer.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let tar = archive(&[
        (
            "w/d",
            EntryType::Symlink,
            b"",
            Some(outside.to_str().unwrap()),
        ),
        ("w/d/planted", EntryType::Regular, b"x", None),
    ]);
    let err = extract(&tar[..], &target, 1, ExtractLimits::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::Eacces, "{}", err.message);
    assert!(!outside.join("planted").exists());
    let tar = archive(&[
        (
            "w/f",
            EntryType::Symlink,
            b"",
            Some(outside.join("g").to_str().unwrap()),
        ),
        ("w/f", EntryType::Regular, b"x", None),
    ]);
    extract(&tar[..], &target, 1, ExtractLimits::default()).unwrap();
    assert!(
        !outside.join("g").exists(),
        "a file replaces the link, never writes through it"
    );
    assert!(std::fs::symlink_metadata(target.join("f"))
        .unwrap()
        .is_file());
}

#[test]
fn bounds_on_bytes_and_entries_are_limit_exceeded() {
    let (_outer, target) = fresh();
    let big = vec![0u8; 4096];
    let tar = archive(&[("w/big", EntryType::Regular, &big, None)]);
    let limits = ExtractLimits {
        max_bytes: 1024,
        max_entries: 10,
    };
    let err = extract(&tar[..], &target, 1, limits).unwrap_err();
    assert_eq!(err.code, ErrorCode::LimitExceeded);
    assert!(!target.join("big").exists());
    let many: Vec<(String, EntryType, &[u8], Option<&str>)> = (0..20)
        .map(|i| (format!("w/f{i}"), EntryType::Regular, &b""[..], None))
        .collect();
    let refs: Vec<_> = many
        .iter()
        .map(|(n, k, d, l)| (n.as_str(), *k, *d, *l))
        .collect();
    let err = extract(&archive(&refs)[..], &target, 1, limits).unwrap_err();
    assert_eq!(err.code, ErrorCode::LimitExceeded);
}

#[test]
fn a_header_claiming_a_huge_size_is_refused_before_writing() {
    let (_outer, target) = fresh();
    let mut h = header("w/huge", EntryType::Regular, 0);
    h.set_size(1 << 40);
    h.set_cksum();
    let mut tar = h.as_bytes().to_vec();
    tar.extend_from_slice(&[0u8; 1024]);
    let err = extract(&tar[..], &target, 1, ExtractLimits::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::LimitExceeded);
    assert!(!target.join("huge").exists());
}
