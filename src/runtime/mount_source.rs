//! A bind mount's host folder, created before the container that mounts it (an engine
//! would otherwise create it as root, or refuse).

use crate::error::{Error, ErrorCode, Result};

/// Creates `source` (and its parents) unless something exists there already.
pub async fn ensure_mount_source(source: &str, name: &str) -> Result<()> {
    match tokio::fs::metadata(source).await {
        Ok(_) => Ok(()),
        Err(_) => tokio::fs::create_dir_all(source).await.map_err(|err| {
            Error::new(
                if err.kind() == std::io::ErrorKind::PermissionDenied {
                    ErrorCode::Eacces
                } else {
                    ErrorCode::Enoent
                },
                format!("container '{name}': cannot create mount source '{source}': {err}"),
            )
        }),
    }
}
