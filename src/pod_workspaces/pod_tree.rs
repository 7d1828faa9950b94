//! A session's workspace folder between its host clone and its Pod, over the Pod's exec
//! (through its session agent where it serves): copied in as a tar that the image's own
//! `tar` unpacks, read back as a tar the Pod's `tar` writes, which the host extracts as
//! hostile input (`crate::tar_extract`) into a fresh folder beside the clone and exchanges
//! with it in one rename. Both directions are held in memory, up to `TREE_LIMIT`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::container_archive::EntryOwner;
use crate::container_runtime::ContainerRuntime;
use crate::error::{Error, ErrorCode, Result};
use crate::kubernetes::KubernetesRuntime;
use crate::runtime::exec::ExecRequest;
use crate::tar_extract::{extract, ExtractLimits};
use crate::workspace::{fresh_beside, replace_clone};
use crate::workspace_volume::tree_tar;

/// The largest workspace (as a tar) copied either way.
pub const TREE_LIMIT: usize = 1 << 30;
/// How long one copy may take.
const COPY_TIMEOUT: Duration = Duration::from_secs(600);

/// The parent and the last name of an absolute folder other than `/`.
fn split_folder(folder: &str) -> Result<(&str, &str)> {
    let trimmed = folder.trim_end_matches('/');
    match trimmed.rsplit_once('/') {
        Some((parent, name)) if !name.is_empty() && folder.starts_with('/') => {
            Ok((if parent.is_empty() { "/" } else { parent }, name))
        }
        _ => Err(Error::invalid_argument(format!(
            "workspace folder {folder:?}: an absolute folder other than /"
        ))),
    }
}

fn blocking(what: &str, err: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::EngineError, format!("{what}: {err}"))
}

/// What the Pod's `tar` said when it failed: exit 127 is an image without `tar`.
fn tar_failed(what: &str, code: i64, stderr: &[u8]) -> Error {
    let said = String::from_utf8_lossy(&stderr[..stderr.len().min(600)]).into_owned();
    match code {
        127 => Error::new(
            ErrorCode::Unsupported,
            format!("{what}: the image has no `tar`, which a session on Kubernetes needs to receive and give back its workspace ({})", said.trim()),
        ),
        _ => Error::new(
            ErrorCode::EngineError,
            format!("{what}: tar exited {code}: {}", said.trim()),
        ),
    }
}

/// Writes the host `clone` as `folder` in the Pod, owned by `owner`, in one exec: the
/// tar's top directory is the whole path below `/`, whose missing parents `tar` makes.
pub async fn copy_in(
    runtime: &KubernetesRuntime,
    pod: &str,
    (clone, folder): (&Path, &str),
    owner: EntryOwner,
) -> Result<()> {
    let what = format!("pod '{pod}': copying the workspace into {folder}");
    split_folder(folder)?;
    let top = folder.trim_matches('/').to_string();
    let source = clone.to_path_buf();
    let tar = tokio::task::spawn_blocking(move || tree_tar(&source, &top, owner))
        .await
        .map_err(|e| blocking(&what, e))?
        .map_err(|e| Error::new(ErrorCode::Eacces, format!("{what}: {e}")))?;
    if tar.len() > TREE_LIMIT {
        return Err(Error::new(
            ErrorCode::LimitExceeded,
            format!(
                "{what}: the clone is {} bytes as a tar, more than the {TREE_LIMIT} a Pod receives",
                tar.len()
            ),
        ));
    }
    let request = ExecRequest {
        command: ["tar", "-x", "-f", "-", "-C", "/"]
            .into_iter()
            .map(String::from)
            .collect(),
        stdin: Some(tar),
        timeout: Some(COPY_TIMEOUT),
        ..Default::default()
    };
    let outcome = runtime.exec(pod, request).await?;
    match outcome.exit_code {
        0 => Ok(()),
        code => Err(tar_failed(&what, code, &outcome.stderr)),
    }
}

/// Replaces the host `clone` with the Pod's `folder`, read as hostile input.
pub async fn read_back(
    runtime: &KubernetesRuntime,
    pod: &str,
    folder: &str,
    clone: &Path,
    session_id: &str,
) -> Result<()> {
    let what = format!("pod '{pod}': reading the workspace back from {folder}");
    let (parent, name) = split_folder(folder)?;
    let request = ExecRequest {
        command: ["tar", "-c", "-f", "-", "-C", parent, name]
            .into_iter()
            .map(String::from)
            .collect(),
        timeout: Some(COPY_TIMEOUT),
        output_limit: Some(TREE_LIMIT + 1),
        ..Default::default()
    };
    let outcome = runtime.exec(pod, request).await?;
    if outcome.exit_code != 0 {
        return Err(tar_failed(&what, outcome.exit_code, &outcome.stderr));
    }
    if outcome.stdout.len() > TREE_LIMIT {
        return Err(Error::new(
            ErrorCode::LimitExceeded,
            format!("{what}: more than {TREE_LIMIT} bytes as a tar; the host clone keeps what was read before"),
        ));
    }
    let clone: PathBuf = clone.to_path_buf();
    let fresh = fresh_beside(&clone, session_id)?;
    let tar = outcome.stdout;
    tokio::task::spawn_blocking(move || {
        match extract(tar.as_slice(), &fresh, 1, ExtractLimits::default()) {
            Ok(_) => replace_clone(fresh, &clone),
            Err(err) => {
                let _ = std::fs::remove_dir_all(&fresh);
                Err(err)
            }
        }
    })
    .await
    .map_err(|e| blocking(&what, e))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_split_into_parent_and_name() {
        assert_eq!(split_folder("/workspace").unwrap(), ("/", "workspace"));
        assert_eq!(split_folder("/a/b/").unwrap(), ("/a", "b"));
        for bad in ["/", "", "rel/x", "//"] {
            assert!(split_folder(bad).is_err(), "{bad}");
        }
    }
}
