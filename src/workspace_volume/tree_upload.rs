//! A host directory uploaded into a container through the archive endpoint, as a tar built
//! on a blocking thread and streamed: regular files, directories and symlinks (added as
//! links, never followed), each owned by the given uid:gid, under the target's own name so
//! that the target directory itself gets that owner too.

use std::fs::Metadata;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use bollard::query_parameters::UploadToContainerOptionsBuilder;
use bytes::Bytes;
use tar::{EntryType, Header};
use tokio::sync::mpsc;

use crate::engine::{from_bollard, Engine};
use crate::error::{Error, ErrorCode, Result};
use crate::fileio::EntryOwner;

/// Directories deeper than this are not uploaded.
const MAX_DEPTH: usize = 256;
const CHUNK: usize = 256 << 10;

/// Sends what the tar builder writes, in chunks, to the upload.
struct ChannelWriter {
    buffer: Vec<u8>,
    sender: mpsc::Sender<Bytes>,
}

impl ChannelWriter {
    fn send(&mut self) -> std::io::Result<()> {
        let chunk = Bytes::from(std::mem::take(&mut self.buffer));
        self.sender
            .blocking_send(chunk)
            .map_err(|_| std::io::Error::other("the upload ended early"))
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.buffer.is_empty() {
            true => Ok(()),
            false => self.send(),
        }
    }
}

fn header(meta: &Metadata, kind: EntryType, owner: EntryOwner) -> Header {
    let mut h = Header::new_gnu();
    h.set_entry_type(kind);
    h.set_mode(meta.mode() & 0o7777);
    h.set_mtime(meta.mtime().max(0) as u64);
    h.set_uid(u64::from(owner.uid));
    h.set_gid(u64::from(owner.gid));
    h.set_size(0);
    h
}

fn add_tree(
    tar: &mut tar::Builder<ChannelWriter>,
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
    let (sender, receiver) = mpsc::channel::<Bytes>(4);
    let name = PathBuf::from(name);
    let built = tokio::task::spawn_blocking(move || {
        let writer = ChannelWriter {
            buffer: Vec::with_capacity(CHUNK),
            sender,
        };
        let mut tar = tar::Builder::new(writer);
        tar.follow_symlinks(false);
        add_tree(&mut tar, &host_dir, &name, owner, 0)?;
        tar.into_inner()?.flush()
    });
    let stream = futures_util::stream::unfold(receiver, |mut r| async move {
        r.recv().await.map(|chunk| (chunk, r))
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
