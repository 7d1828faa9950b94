//! A feature's files as the derived image's build receives them: a tar held in memory
//! (bounded), its sha256 and its devcontainer-feature.json. A local feature's folder must
//! be inside the project with no symlink on the way, and its files are read without
//! following symlinks; a fetched feature's tar is only read, never unpacked on the host.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::devcontainer::{parse_feature_metadata, FeatureMetadata, FEATURE_JSON_LIMIT};
use crate::error::Result;
use crate::session_settings::feature_refused as refused;

/// The most a feature's files may weigh (a local folder's total, a fetched layer).
pub const FEATURE_SIZE_LIMIT: u64 = 64 << 20;
/// The most entries archived from a local feature's folder.
const ENTRY_LIMIT: usize = 10_000;

#[derive(Debug)]
pub struct FeatureContent {
    pub tar: Vec<u8>,
    /// `sha256:<hex>` of `tar`.
    pub digest: String,
    pub metadata: FeatureMetadata,
}

pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

fn open_regular(path: &Path, limit: u64, reference: &str) -> Result<Vec<u8>> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| refused(reference, format_args!("{}: {e}", path.display())))?;
    let meta = file
        .metadata()
        .map_err(|e| refused(reference, format_args!("{}: {e}", path.display())))?;
    if !meta.is_file() {
        return Err(refused(
            reference,
            format_args!("{} is not a regular file", path.display()),
        ));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| refused(reference, format_args!("{}: {e}", path.display())))?;
    if bytes.len() as u64 > limit {
        return Err(refused(
            reference,
            format_args!("{} is larger than {limit} bytes", path.display()),
        ));
    }
    Ok(bytes)
}

struct LocalArchive<'a> {
    builder: tar::Builder<Vec<u8>>,
    budget: u64,
    entries: usize,
    reference: &'a str,
}

impl LocalArchive<'_> {
    fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_mode(mode);
        header.set_size(size);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header
    }

    fn add_dir(&mut self, dir: &Path, name: &Path) -> Result<()> {
        let io =
            |e: std::io::Error| refused(self.reference, format_args!("{}: {e}", dir.display()));
        let mut children: Vec<_> = std::fs::read_dir(dir)
            .map_err(io)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<std::io::Result<_>>()
            .map_err(io)?;
        children.sort();
        for child in children {
            self.entries += 1;
            if self.entries > ENTRY_LIMIT {
                return Err(refused(
                    self.reference,
                    format_args!("more than {ENTRY_LIMIT} files"),
                ));
            }
            let (path, inside) = (dir.join(&child), name.join(&child));
            let meta = std::fs::symlink_metadata(&path).map_err(io)?;
            let mode = meta.mode() & 0o7777;
            let err = |e: std::io::Error| refused(self.reference, e);
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).map_err(io)?;
                let mut h = Self::header(tar::EntryType::Symlink, 0o777, 0);
                self.builder
                    .append_link(&mut h, &inside, &target)
                    .map_err(err)?;
            } else if meta.is_dir() {
                let mut h = Self::header(tar::EntryType::Directory, mode, 0);
                self.builder
                    .append_data(&mut h, &inside, std::io::empty())
                    .map_err(err)?;
                self.add_dir(&path, &inside)?;
            } else if meta.is_file() {
                let bytes = open_regular(&path, self.budget, self.reference)?;
                self.budget -= bytes.len() as u64;
                let mut h = Self::header(tar::EntryType::Regular, mode, bytes.len() as u64);
                self.builder
                    .append_data(&mut h, &inside, bytes.as_slice())
                    .map_err(err)?;
            }
        }
        Ok(())
    }
}

/// A local feature's folder (checked by `checked_local_dir`) archived the same way every
/// time, so its digest changes only with its content.
pub fn read_local(dir: &Path, reference: &str) -> Result<FeatureContent> {
    let json = open_regular(
        &dir.join("devcontainer-feature.json"),
        FEATURE_JSON_LIMIT,
        reference,
    )?;
    let metadata = parse_feature_metadata(&json, reference)?;
    open_regular(&dir.join("install.sh"), FEATURE_SIZE_LIMIT, reference)?;
    let mut archive = LocalArchive {
        builder: tar::Builder::new(Vec::new()),
        budget: FEATURE_SIZE_LIMIT,
        entries: 0,
        reference,
    };
    archive.add_dir(dir, Path::new("."))?;
    let tar = archive
        .builder
        .into_inner()
        .map_err(|e| refused(reference, e))?;
    Ok(FeatureContent {
        digest: sha256_digest(&tar),
        tar,
        metadata,
    })
}

/// A fetched feature's layer (digest already verified): its devcontainer-feature.json
/// read from the tar in memory, bounded; `install.sh` must be there too.
pub fn from_layer(tar: Vec<u8>, digest: String, reference: &str) -> Result<FeatureContent> {
    let mut json = None;
    let mut has_install = false;
    let mut archive = tar::Archive::new(tar.as_slice());
    let entries = archive
        .entries()
        .map_err(|e| refused(reference, format_args!("its layer is not a tar: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| refused(reference, format_args!("its layer: {e}")))?;
        let path = entry
            .path()
            .map_err(|e| refused(reference, e))?
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect::<PathBuf>();
        let regular = entry.header().entry_type().is_file();
        if regular && path == Path::new("install.sh") {
            has_install = true;
        }
        if regular && path == Path::new("devcontainer-feature.json") {
            if entry.size() > FEATURE_JSON_LIMIT {
                return Err(refused(reference, "devcontainer-feature.json is too large"));
            }
            let mut text = Vec::new();
            (&mut entry)
                .take(FEATURE_JSON_LIMIT)
                .read_to_end(&mut text)
                .map_err(|e| refused(reference, e))?;
            json = Some(text);
        }
    }
    let json =
        json.ok_or_else(|| refused(reference, "its layer has no devcontainer-feature.json"))?;
    if !has_install {
        return Err(refused(reference, "its layer has no install.sh"));
    }
    Ok(FeatureContent {
        metadata: parse_feature_metadata(&json, reference)?,
        tar,
        digest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::session_settings::checked_local_dir;

    struct Dir(PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn project() -> Dir {
        let dir = std::env::temp_dir().join(format!("ci-feat-{}", uuid::Uuid::new_v4()));
        let feature = dir.join(".devcontainer/features/hello");
        std::fs::create_dir_all(&feature).unwrap();
        std::fs::write(
            feature.join("devcontainer-feature.json"),
            r#"{ "id": "hello" }"#,
        )
        .unwrap();
        std::fs::write(feature.join("install.sh"), "#!/bin/sh\necho hi\n").unwrap();
        Dir(dir)
    }

    #[test]
    fn a_local_feature_is_archived_the_same_way_every_time() {
        let p = project();
        let dir =
            checked_local_dir(&p.0, &p.0.join(".devcontainer/features/hello"), "./f").unwrap();
        let a = read_local(&dir, "./f").unwrap();
        let b = read_local(&dir, "./f").unwrap();
        assert_eq!(a.metadata.id, "hello");
        assert_eq!(a.digest, b.digest);
        let again = from_layer(a.tar, a.digest.clone(), "./f").unwrap();
        assert_eq!(again.metadata.id, "hello");
    }

    #[test]
    fn escaping_the_project_or_passing_a_symlink_is_refused() {
        let p = project();
        let outside = p.0.parent().unwrap().join("elsewhere");
        let err = checked_local_dir(&p.0, &outside, "../elsewhere").unwrap_err();
        assert!(
            err.message.contains("outside the project"),
            "{}",
            err.message
        );
        std::os::unix::fs::symlink("/tmp", p.0.join(".devcontainer/link")).unwrap();
        let err = checked_local_dir(&p.0, &p.0.join(".devcontainer/link"), "./link").unwrap_err();
        assert!(err.message.contains("is a symlink"), "{}", err.message);
        let json =
            p.0.join(".devcontainer/features/hello/devcontainer-feature.json");
        std::fs::remove_file(&json).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", &json).unwrap();
        let dir = p.0.join(".devcontainer/features/hello");
        assert_eq!(
            read_local(&dir, "./f").unwrap_err().code,
            ErrorCode::Devcontainer
        );
    }
}
