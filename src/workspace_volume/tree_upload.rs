//! A host directory uploaded into a container through the archive endpoint, as a tar built
//! on a blocking thread and streamed: regular files, directories and symlinks (added as
//! links, never followed), each owned by the given uid:gid, under the target's own name so
//! that the target directory itself gets that owner too.

use std::fs::Metadata;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use bollard::query_parameters::UploadToContainerOptionsBuilder;
use tar::{EntryType, Header};

use crate::container_archive::EntryOwner;
use crate::engine::{chunk_channel, from_bollard, Engine};
use crate::error::{Error, ErrorCode, Result};

/// Directories deeper than this are not uploaded.
const MAX_DEPTH: usize = 256;

fn header(meta: &Metadata, kind: EntryType, owner: EntryOwner) -> Header {
    let mut h = Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(meta.mode() & 0o777);
    h.set_mtime(meta.mtime().max(0) as u64);
    h.set_uid(u64::from(owner.uid));
    h.set_gid(u64::from(owner.gid));
    h.set_size(0);
    h
}

fn add_tree<W: Write>(
    tar: &mut tar::Builder<W>,
    dir: &Path,
    name: &Path,
    owner: EntryOwner,
    depth: usize,
) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    let mut h = header(&meta, EntryType::Directory, owner);
    tar.append_data(&mut h, name, std::io::empty())?;
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<std::io::Result<_>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let inner = name.join(entry.file_name());
        let meta = std::fs::symlink_metadata(&path)?;
        let kind = meta.file_type();
        if kind.is_dir() {
            add_tree(tar, &path, &inner, owner, depth + 1)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&path)?;
            let mut h = header(&meta, EntryType::Symlink, owner);
            tar.append_link(&mut h, &inner, &target)?;
        } else if kind.is_file() {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)?;
            let size = file.metadata()?.len();
            let mut h = header(&meta, EntryType::Regular, owner);
            h.set_size(size);
            tar.append_data(&mut h, &inner, std::io::Read::take(file, size))?;
        }
    }
    Ok(())
}

/// `host_dir`'s tree as a tar whose one top directory is `name`, every entry owned by
/// `owner` (for a container reached without the archive endpoint, which unpacks it itself).
pub fn tree_tar(host_dir: &Path, name: &str, owner: EntryOwner) -> std::io::Result<Vec<u8>> {
    let mut tar = tar::Builder::new(Vec::new());
    tar.follow_symlinks(false);
    add_tree(&mut tar, host_dir, Path::new(name), owner, 0)?;
    tar.into_inner()
}

/// Uploads `host_dir`'s tree as the directory `container_dir` (whose parent must exist in
/// the container, which may be created and not yet started), owned by `owner`.
pub async fn upload_tree(
    engine: &Engine,
    container: &str,
    host_dir: PathBuf,
    container_dir: &str,
    owner: EntryOwner,
) -> Result<()> {
    let trimmed = container_dir.trim_end_matches('/');
    let (parent, name) = trimmed.rsplit_once('/').unwrap_or(("", trimmed));
    if name.is_empty() {
        return Err(Error::invalid_argument(format!(
            "container '{container}': cannot upload a tree as {container_dir:?}"
        )));
    }
    let parent = if parent.is_empty() { "/" } else { parent };
    let (writer, stream) = chunk_channel();
    let name = PathBuf::from(name);
    let built = tokio::task::spawn_blocking(move || {
        let mut tar = tar::Builder::new(writer);
        tar.follow_symlinks(false);
        add_tree(&mut tar, &host_dir, &name, owner, 0)?;
        tar.into_inner()?.flush()
    });
    let options = UploadToContainerOptionsBuilder::default()
        .path(parent)
        .build();
    let subject = format!("container '{container}': upload of {container_dir}");
    // No per-request timeout: a large clone takes as long as it takes to send.
    let uploaded = engine
        .docker()
        .upload_to_container(container, Some(options), bollard::body_stream(stream))
        .await
        .map_err(|e| engine.annotate(from_bollard(e, &subject)));
    let built = built
        .await
        .map_err(|e| Error::new(ErrorCode::EngineError, format!("{subject}: {e}")))?;
    built.map_err(|e| Error::new(ErrorCode::Eacces, format!("{subject}: {e}")))?;
    uploaded
}
