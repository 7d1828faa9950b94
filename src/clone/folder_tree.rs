//! A plain folder's files written as git trees and blobs into a repository the library
//! owns: regular files with their bytes and executable bit, symlinks as links (their
//! targets never followed), nothing else; `.git` never taken, directories with nothing to
//! store left out (git has no empty directories). What is ignored, and never read: what
//! the folder's `.gitignore` files say, over the library's default rules, as `git add -A`
//! would leave out. Within bounds on entries, bytes and time.

use std::ffi::{CStr, OsStr};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use git2::{Oid, Repository};

use super::folder_entries::{EntryKind, FolderDir};
use super::ignore_rules::{add_rules, rooted_rules, DEFAULT_GITIGNORE};
use crate::delivery::{exceeded, Deadline};
use crate::error::{Error, ErrorCode, Result};

/// How much of a folder a snapshot takes before it gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotLimits {
    /// Files, symlinks and directories taken (ignored ones are not counted).
    pub max_entries: u64,
    /// Bytes of files and symlink targets taken.
    pub max_bytes: u64,
    /// Directories nested below the folder.
    pub max_depth: usize,
    /// A `.gitignore` read for its rules.
    pub max_gitignore_bytes: u64,
    /// The whole snapshot.
    pub timeout: Duration,
}

impl Default for SnapshotLimits {
    fn default() -> Self {
        SnapshotLimits {
            max_entries: 1_000_000,
            max_bytes: 8 << 30,
            max_depth: 2048,
            max_gitignore_bytes: 4 << 20,
            timeout: Duration::from_secs(600),
        }
    }
}

/// What a snapshot took and left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeCounts {
    pub entries: u64,
    pub bytes: u64,
    /// FIFOs, sockets, devices, and names git refuses in a tree.
    pub skipped: u64,
}

const CHUNK: usize = 1 << 20;
/// A file up to this size is hashed from memory; a larger one is streamed.
const IN_MEMORY: u64 = 16 << 20;

fn io_error(path: &[u8], err: std::io::Error) -> Error {
    let shown = String::from_utf8_lossy(path);
    let code = match err.kind() {
        std::io::ErrorKind::PermissionDenied => ErrorCode::Eacces,
        _ => ErrorCode::Git,
    };
    Error::new(code, format!("snapshot of {shown}: {err}"))
}

fn git_error(path: &[u8], err: git2::Error) -> Error {
    Error::git(
        &format!("snapshot of {}", String::from_utf8_lossy(path)),
        err,
    )
}

pub struct FolderTree<'r> {
    repo: &'r Repository,
    limits: SnapshotLimits,
    deadline: Deadline,
    pub counts: TreeCounts,
}

impl<'r> FolderTree<'r> {
    /// `repo` should be opened bare: its ignore rules are then the defaults and the
    /// folder's files only, checked by path, and nothing of a work tree is looked at.
    pub fn new(repo: &'r Repository, limits: SnapshotLimits, deadline: Deadline) -> Result<Self> {
        add_rules(repo, DEFAULT_GITIGNORE.as_bytes())
            .map_err(|e| Error::git("the default ignore rules", e))?;
        Ok(FolderTree {
            repo,
            limits,
            deadline,
            counts: TreeCounts::default(),
        })
    }

    /// The tree of `folder`; an empty tree when nothing in it is stored.
    pub fn write(&mut self, folder: &Path) -> Result<Oid> {
        let root =
            FolderDir::open(folder).map_err(|e| io_error(folder.as_os_str().as_bytes(), e))?;
        match self.directory(&root, b"", 0)? {
            Some(tree) => Ok(tree),
            None => self
                .repo
                .treebuilder(None)
                .and_then(|b| b.write())
                .map_err(|e| Error::git("an empty tree", e)),
        }
    }

    fn ignored(&self, path: &[u8], directory: bool) -> Result<bool> {
        let mut shown = path.to_vec();
        if directory {
            shown.push(b'/');
        }
        self.repo
            .is_path_ignored(Path::new(OsStr::from_bytes(&shown)))
            .map_err(|e| git_error(path, e))
    }

    /// One more file, symlink or directory taken.
    fn take_entry(&mut self) -> Result<()> {
        self.deadline.check("snapshot of the project folder")?;
        self.counts.entries += 1;
        if self.counts.entries > self.limits.max_entries {
            return Err(exceeded(
                "snapshot of the project folder",
                format!("{} files", self.limits.max_entries),
            ));
        }
        Ok(())
    }

    /// `bytes` more of `path` taken.
    fn take_bytes(&mut self, path: &[u8], bytes: u64) -> Result<()> {
        self.deadline.check("snapshot of the project folder")?;
        self.counts.bytes += bytes;
        if self.counts.bytes > self.limits.max_bytes {
            return Err(exceeded(
                &format!(
                    "snapshot of the project folder (at {})",
                    String::from_utf8_lossy(path)
                ),
                format!("{} bytes", self.limits.max_bytes),
            ));
        }
        Ok(())
    }

    /// The rules of `dir`'s own `.gitignore`, when it is a regular file.
    fn read_rules(&mut self, dir: &FolderDir, rel: &[u8]) -> Result<()> {
        let name = c".gitignore";
        if dir.kind(name).map_err(|e| io_error(rel, e))? != Some(EntryKind::File) {
            return Ok(());
        }
        let Some(opened) = dir.open_file(name).map_err(|e| io_error(rel, e))? else {
            return Ok(());
        };
        let max = self.limits.max_gitignore_bytes;
        let mut text = Vec::new();
        opened
            .file
            .take(max + 1)
            .read_to_end(&mut text)
            .map_err(|e| io_error(rel, e))?;
        if text.len() as u64 > max {
            return Err(exceeded(
                &format!("the .gitignore of {:?}", String::from_utf8_lossy(rel)),
                format!("{max} bytes"),
            ));
        }
        add_rules(self.repo, &rooted_rules(rel, &text)).map_err(|e| git_error(rel, e))
    }

    /// The tree of one directory (`rel` from the folder's root), `None` when nothing in
    /// it is stored.
    fn directory(&mut self, dir: &FolderDir, rel: &[u8], depth: usize) -> Result<Option<Oid>> {
        if depth > self.limits.max_depth {
            return Err(exceeded(
                "snapshot of the project folder",
                format!("{} nested directories", self.limits.max_depth),
            ));
        }
        self.read_rules(dir, rel)?;
        let mut builder = self.repo.treebuilder(None).map_err(|e| git_error(rel, e))?;
        for name in dir.names().map_err(|e| io_error(rel, e))? {
            if name.to_bytes() == b".git" {
                continue;
            }
            let path = match rel.is_empty() {
                true => name.to_bytes().to_vec(),
                false => [rel, b"/", name.to_bytes()].concat(),
            };
            let Some(kind) = dir.kind(&name).map_err(|e| io_error(&path, e))? else {
                continue;
            };
            let entry = match kind {
                EntryKind::Directory if !self.ignored(&path, true)? => {
                    self.take_entry()?;
                    let Some(child) = dir.child(&name).map_err(|e| io_error(&path, e))? else {
                        continue;
                    };
                    self.directory(&child, &path, depth + 1)?
                        .map(|oid| (oid, 0o040000))
                }
                EntryKind::File if !self.ignored(&path, false)? => self.file(dir, &name, &path)?,
                EntryKind::Symlink if !self.ignored(&path, false)? => {
                    let target = dir.read_link(&name).map_err(|e| io_error(&path, e))?;
                    self.take_entry()?;
                    self.take_bytes(&path, target.len() as u64)?;
                    let oid = self.repo.blob(&target).map_err(|e| git_error(&path, e))?;
                    Some((oid, 0o120000))
                }
                EntryKind::Other => {
                    self.counts.skipped += 1;
                    None
                }
                _ => None,
            };
            let Some((oid, mode)) = entry else {
                continue;
            };
            if let Err(e) = builder.insert(name.clone(), oid, mode) {
                // A name git refuses in a tree (`.GIT`, `git~1`, …): not stored.
                tracing::warn!(
                    "snapshot: {} left out: {}",
                    String::from_utf8_lossy(&path),
                    e.message()
                );
                self.counts.skipped += 1;
            }
        }
        if builder.is_empty() {
            return Ok(None);
        }
        builder.write().map(Some).map_err(|e| git_error(rel, e))
    }

    /// A regular file's blob and mode; `None` when it is no longer a regular file.
    fn file(&mut self, dir: &FolderDir, name: &CStr, path: &[u8]) -> Result<Option<(Oid, i32)>> {
        let Some(opened) = dir.open_file(name).map_err(|e| io_error(path, e))? else {
            self.counts.skipped += 1;
            return Ok(None);
        };
        self.take_entry()?;
        let mode = if opened.executable {
            0o100755
        } else {
            0o100644
        };
        let mut file = opened.file;
        let mut data = Vec::new();
        let mut writer = None;
        let mut chunk = vec![0u8; CHUNK];
        loop {
            let n = file.read(&mut chunk).map_err(|e| io_error(path, e))?;
            if n == 0 {
                break;
            }
            self.take_bytes(path, n as u64)?;
            if writer.is_none() && (data.len() + n) as u64 > IN_MEMORY {
                let mut w = self
                    .repo
                    .blob_writer(None)
                    .map_err(|e| git_error(path, e))?;
                w.write_all(&data).map_err(|e| io_error(path, e))?;
                data = Vec::new();
                writer = Some(w);
            }
            match writer.as_mut() {
                Some(w) => w.write_all(&chunk[..n]).map_err(|e| io_error(path, e))?,
                None => data.extend_from_slice(&chunk[..n]),
            }
        }
        let oid = match writer {
            Some(w) => w.commit(),
            None => self.repo.blob(&data),
        }
        .map_err(|e| git_error(path, e))?;
        Ok(Some((oid, mode)))
    }
}
