//! Opening a session's clone, which the agent controls completely, as hostile input: the
//! git directory is the clone's own `.git` directory (not a gitfile, not a symlink, no
//! `commondir`/`gitdir` redirection, no alternates outside the clone, no symlinked or
//! special file where libgit2 reads), its config holds no includes nor paths out of the
//! clone, the files libgit2 reads whole are bounded, and the work tree is the clone
//! whatever `core.worktree` says. libgit2 itself runs no hook, filter driver, textconv,
//! external diff or fsmonitor (only its built-in `crlf` and `ident` filters exist).

use std::ffi::OsStr;
use std::fs::Metadata;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{ConfigLevel, Repository};

use super::limits::{exceeded, Limits};
use crate::error::{Error, ErrorCode, Result};

fn refused(clone: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Git,
        format!("clone {} refused: {why}", clone.display()),
    )
}

fn lstat(path: &Path) -> Option<Metadata> {
    std::fs::symlink_metadata(path).ok()
}

/// A directory that must be a real one (not a symlink, not a file).
fn real_dir(clone: &Path, path: &Path) -> Result<()> {
    match lstat(path) {
        Some(m) if m.is_dir() => Ok(()),
        Some(_) => Err(refused(
            clone,
            format!("{} is not a directory", path.display()),
        )),
        None => Err(refused(clone, format!("{} is missing", path.display()))),
    }
}

/// A file that, if present, must be a regular one of at most `max` bytes.
fn plain_file(clone: &Path, path: &Path, max: u64) -> Result<bool> {
    match lstat(path) {
        None => Ok(false),
        Some(m) if m.is_file() => {
            if m.len() > max {
                return Err(exceeded(
                    &format!("clone {}: {}", clone.display(), path.display()),
                    format!("{max} bytes"),
                ));
            }
            Ok(true)
        }
        Some(_) => Err(refused(
            clone,
            format!("{} is not a regular file", path.display()),
        )),
    }
}

/// Entries of `dir` (and of its subdirectories down to `depth`) must be regular files or
/// directories: a symlink could lead out of the clone, a FIFO would block a read.
fn plain_tree(clone: &Path, dir: &Path, depth: u32, budget: &mut usize) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.filter_map(|e| e.ok()) {
        *budget = budget
            .checked_sub(1)
            .ok_or_else(|| exceeded(&format!("clone {}: files", clone.display()), "entries"))?;
        let kind = entry
            .file_type()
            .map_err(|e| refused(clone, format!("{}: {e}", entry.path().display())))?;
        if kind.is_dir() && depth > 0 {
            plain_tree(clone, &entry.path(), depth - 1, budget)?;
        } else if !kind.is_file() && !kind.is_dir() {
            return Err(refused(
                clone,
                format!("{} is not a regular file", entry.path().display()),
            ));
        }
    }
    Ok(())
}

/// Config text from which libgit2 could read an `include.path` or `includeIf.*.path`, and
/// so another file, anywhere on the host. Either needs a section whose name starts with
/// `include`, and a section's name follows its `[` (libgit2 allows no space there; this
/// allows any). Where such a `[` may stand is left to no reading of lines: libgit2 skips a
/// UTF-8 BOM, reads a header after another on the same line, and more; any `[include` is
/// refused, wherever it is.
fn has_include(text: &[u8]) -> bool {
    let space = |b: &u8| b.is_ascii_whitespace() || *b == 0x0b;
    text.split(|&b| b == b'[').skip(1).any(|after| {
        let start = after.iter().position(|b| !space(b)).unwrap_or(after.len());
        after[start..]
            .get(..7)
            .is_some_and(|name| name.eq_ignore_ascii_case(b"include"))
    })
}

fn check_config(clone: &Path, path: &Path, limits: &Limits) -> Result<()> {
    if plain_file(clone, path, limits.max_metadata_bytes)? {
        let text = std::fs::read(path).map_err(|e| refused(clone, e))?;
        if has_include(&text) {
            return Err(refused(
                clone,
                format!("{} includes other files", path.display()),
            ));
        }
    }
    Ok(())
}

/// The entries of an alternates file as libgit2 reads them (`load_alternates`): the text up
/// to a NUL, split at every CR and LF, nothing trimmed, empty ones and those starting with
/// `#` skipped.
fn alternates_entries(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    text[..end]
        .split(|&b| b == b'\r' || b == b'\n')
        .filter(|entry| entry.first().is_some_and(|&b| b != b'#'))
}

/// Where libgit2 looks for an entry's objects: the entry joined to the objects directory
/// when it starts with `.`, as it is when absolute; any other is relative to the host
/// process's working directory (`None`).
fn alternate_dir(objects: &Path, entry: &[u8]) -> Option<PathBuf> {
    let path = Path::new(OsStr::from_bytes(entry));
    match entry.first() {
        Some(b'.') => Some(objects.join(path)),
        Some(b'/') => Some(path.to_path_buf()),
        _ => None,
    }
}

/// Each alternate object directory must be inside the clone, and so must theirs.
fn check_alternates(clone: &Path, objects: &Path, limits: &Limits, depth: u32) -> Result<()> {
    let file = objects.join("info").join("alternates");
    if !plain_file(clone, &file, limits.max_metadata_bytes)? {
        return Ok(());
    }
    let root = std::fs::canonicalize(clone).map_err(|e| refused(clone, e))?;
    let text = std::fs::read(&file).map_err(|e| refused(clone, e))?;
    for entry in alternates_entries(&text) {
        let shown = String::from_utf8_lossy(entry);
        let Some(target) = alternate_dir(objects, entry) else {
            let why = format!("alternate {shown:?} is relative to the host's working directory");
            return Err(refused(clone, why));
        };
        let inside = std::fs::canonicalize(&target).is_ok_and(|t| t.starts_with(&root));
        if !inside || depth == 0 {
            return Err(refused(
                clone,
                format!("alternate object directory {shown:?} is outside the clone"),
            ));
        }
        check_alternates(clone, &target, limits, depth - 1)?;
    }
    Ok(())
}

/// Everything under the git directory that libgit2 may read, checked before it reads it.
fn check_git_dir(clone: &Path, git_dir: &Path, limits: &Limits) -> Result<()> {
    real_dir(clone, git_dir)?;
    for redirect in ["commondir", "gitdir"] {
        if lstat(&git_dir.join(redirect)).is_some() {
            return Err(refused(
                clone,
                format!("its git directory has a {redirect} redirection"),
            ));
        }
    }
    for dir in ["objects", "refs"] {
        real_dir(clone, &git_dir.join(dir))?;
    }
    for name in ["HEAD", "info/exclude", "info/attributes"] {
        plain_file(clone, &git_dir.join(name), limits.max_metadata_bytes)?;
    }
    for name in ["index", "packed-refs", "shallow", "info/grafts"] {
        plain_file(clone, &git_dir.join(name), limits.max_index_bytes)?;
    }
    check_config(clone, &git_dir.join("config"), limits)?;
    check_config(clone, &git_dir.join("config.worktree"), limits)?;
    let mut budget = limits.max_files.saturating_mul(4).max(100_000);
    plain_tree(clone, &git_dir.join("objects"), 2, &mut budget)?;
    plain_tree(clone, &git_dir.join("refs"), 32, &mut budget)?;
    check_alternates(clone, &git_dir.join("objects"), limits, 4)
}

/// Config of the clone's own (local) level that names a file libgit2 would read.
fn check_local_paths(clone: &Path, repo: &Repository) -> Result<()> {
    let config = repo.config().map_err(|e| refused(clone, e.message()))?;
    let Ok(local) = config.open_level(ConfigLevel::Local) else {
        return Ok(());
    };
    for key in ["core.excludesfile", "core.attributesfile"] {
        if local.get_entry(key).is_ok() {
            return Err(refused(clone, format!("its config sets {key}")));
        }
    }
    Ok(())
}

/// The clone's repository, opened from its own `.git` directory with the clone as work
/// tree, after the checks above; `GIT` with "refused" when one fails.
pub fn open_clone(clone: &Path, limits: &Limits) -> Result<Repository> {
    real_dir(clone, clone)?;
    let git_dir: PathBuf = clone.join(".git");
    check_git_dir(clone, &git_dir, limits)?;
    for name in [".gitattributes", ".gitignore"] {
        plain_file(clone, &clone.join(name), limits.max_metadata_bytes)?;
    }
    let repo = Repository::open_bare(&git_dir).map_err(|e| refused(clone, e.message()))?;
    check_local_paths(clone, &repo)?;
    repo.set_workdir(clone, false)
        .map_err(|e| refused(clone, e.message()))?;
    Ok(repo)
}
