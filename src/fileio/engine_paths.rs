//! `DockerFileIO`'s operations through the engine alone (the archive endpoints, and one
//! listing exec where the image has a shell): the path for containers where neither the
//! host nor the session agent can answer.

use bytes::Bytes;

use crate::container_archive::{file_error, split, EngineFiles, EntryOwner};
use crate::error::{ErrorCode, Result};
use crate::runtime::exec::ExecRequest;
use crate::runtime::run_buffered;

const LIST_SCRIPT: &str = r#"cd -- "$1" || exit 3
for f in * .[!.]* ..?*; do
  if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
done"#;

pub async fn read(files: &EngineFiles<'_>, path: &str) -> Result<Vec<u8>> {
    let (real, stat) = files.stat(path).await?;
    if stat.is_dir() {
        return Err(file_error(ErrorCode::Eisdir, files.container, path));
    }
    let mut data = Vec::with_capacity(stat.size as usize);
    files
        .read_file(&real, |chunk| data.extend_from_slice(&chunk))
        .await?;
    Ok(data)
}

pub async fn write(
    files: &EngineFiles<'_>,
    path: &str,
    content: Bytes,
    owner: EntryOwner,
) -> Result<()> {
    let container = files.container;
    // A dangling symlink is written through, to where it points, as Node does.
    let (target, mode) = match files.resolve(path).await? {
        (_, Some(stat)) if stat.is_dir() => {
            return Err(file_error(ErrorCode::Eisdir, container, path))
        }
        (real, Some(stat)) => (real, stat.unix_mode()),
        (real, None) => (real, 0o644),
    };
    let Some((dir, name)) = split(&target) else {
        return Err(file_error(ErrorCode::Eisdir, container, path));
    };
    match files.stat_if_exists(&dir).await? {
        Some((real_dir, stat)) if stat.is_dir() => {
            files
                .write_file(&real_dir, &name, content, mode, owner)
                .await
        }
        Some(_) => Err(file_error(ErrorCode::Enotdir, container, path)),
        None => Err(file_error(ErrorCode::Enoent, container, path)),
    }
}

/// `mkdir -p`: up to the deepest existing ancestor, then one archive of the missing chain.
pub async fn make_dirs(files: &EngineFiles<'_>, path: &str, owner: EntryOwner) -> Result<()> {
    let container = files.container;
    let mut missing: Vec<String> = Vec::new();
    let mut current = path.to_string();
    let base = loop {
        match files.stat(&current).await {
            Ok((real, stat)) if stat.is_dir() => break real,
            Ok(_) if missing.is_empty() => {
                return Err(file_error(ErrorCode::Eexist, container, path))
            }
            Ok(_) => return Err(file_error(ErrorCode::Enotdir, container, path)),
            Err(err) if err.code == ErrorCode::Enoent => {
                if files.resolve(&current).await?.0 != current {
                    // A dangling symlink: mkdir does not create its target.
                    return Err(file_error(ErrorCode::Eexist, container, &current));
                }
                let (parent, name) = split(&current).ok_or(err)?;
                missing.push(name);
                current = parent;
            }
            Err(err) => return Err(err),
        }
    };
    if missing.is_empty() {
        return Ok(());
    }
    missing.reverse();
    let chain: Vec<String> = (1..=missing.len())
        .map(|n| missing[..n].join("/"))
        .collect();
    files.make_dirs(&base, &chain, owner).await
}

/// The names in a directory (unsorted): by one exec where `exec_listing`, else from the
/// directory's archive.
pub async fn read_dir(
    files: &EngineFiles<'_>,
    path: &str,
    exec_listing: bool,
) -> Result<Vec<String>> {
    let (real, stat) = files.stat(path).await?;
    if !stat.is_dir() {
        return Err(file_error(ErrorCode::Enotdir, files.container, path));
    }
    let listed = if exec_listing {
        list_by_exec(files, path, &real).await?
    } else {
        None
    };
    match listed {
        Some(names) => Ok(names),
        None => files.list_dir(&real).await,
    }
}

/// One exec of a NUL-separated listing; `None` when the container stopped meanwhile.
async fn list_by_exec(
    files: &EngineFiles<'_>,
    path: &str,
    real: &str,
) -> Result<Option<Vec<String>>> {
    let request = ExecRequest {
        command: vec![
            "/bin/sh".into(),
            "-c".into(),
            LIST_SCRIPT.into(),
            "sh".into(),
            real.to_string(),
        ],
        user: Some("0".into()),
        timeout: Some(files.engine.timeout()),
        ..Default::default()
    };
    let out = match run_buffered(files.engine, files.container, request).await {
        Ok(out) => out,
        Err(err) if err.code == ErrorCode::ContainerNotRunning => return Ok(None),
        Err(err) => return Err(err),
    };
    if out.exit_code != 0 {
        return Err(file_error(ErrorCode::Eacces, files.container, path));
    }
    Ok(Some(
        out.stdout
            .split(|&b| b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect(),
    ))
}
