//! Whether an engine shares this machine's kernel and file system, found out rather than
//! assumed from its address: a unix socket may be forwarded from a VM or another machine,
//! and a tcp engine may be this machine's own. The engine makes a volume with a random
//! name; if its mount point is a folder here too, the engine's files are this machine's.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use bollard::models::VolumeCreateRequest;
use bollard::query_parameters::RemoveVolumeOptions;
use bollard::Docker;

use super::endpoint::Endpoint;

pub const PROBE_LABEL: &str = "container-isolation.probe";

/// Probes once; any failure means "not local". The volume is removed whatever happens.
pub async fn shares_this_machine(docker: &Docker, endpoint: &Endpoint, timeout: Duration) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let name = format!(
        "container-isolation-probe-{}",
        uuid::Uuid::new_v4().simple()
    );
    let request = VolumeCreateRequest {
        name: Some(name.clone()),
        labels: Some(HashMap::from([(PROBE_LABEL.to_string(), "1".to_string())])),
        ..Default::default()
    };
    let mountpoint = tokio::time::timeout(timeout, async {
        docker.create_volume(request).await?;
        docker.inspect_volume(&name).await.map(|v| v.mountpoint)
    })
    .await;
    // Looked at while the volume exists.
    let here = match mountpoint {
        Ok(Ok(path)) if !path.is_empty() => is_folder_here(Path::new(&path), endpoint),
        _ => false,
    };
    // Removed even when the create timed out: it may have happened anyway.
    let remove = RemoveVolumeOptions { force: true };
    let _ = tokio::time::timeout(timeout, docker.remove_volume(&name, Some(remove))).await;
    here
}

/// The mount point is a folder on this machine (not followed if it is a link). A rootful
/// engine's data root is often closed to other users: a refusal to look, for an engine on
/// a unix socket, counts as here (the socket is on this machine and the path is guarded
/// the way a local data root is); anywhere else it does not.
fn is_folder_here(path: &Path, endpoint: &Endpoint) -> bool {
    match path.symlink_metadata() {
        Ok(meta) => meta.is_dir(),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => endpoint.is_unix(),
        Err(_) => false,
    }
}
