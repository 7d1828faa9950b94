//! `WorkspaceInfo`, what `create`, `get` and `list` report of a session, and the
//! `repository` option of `create` (a remote cloned on the host).

use napi_derive::napi;

use super::git_remote::{transfer_from, GitCredentials};
use super::resources::Resources;
use crate::error::Result;
use crate::git_transport::Transfer;
use crate::workspace;

/// `create`'s `repository`: a remote to clone on the host instead of a local project.
#[napi(object, object_to_js = false)]
pub struct RepositoryOptions {
    /// `https://`, `http://` (credentials only to a loopback host), `ssh://`,
    /// `user@host:path`, `file://` or an absolute path.
    pub url: String,
    /// Where the session starts: a branch or tag of the remote, or a commit id (default
    /// the remote's HEAD); the same as `create`'s own `ref`.
    #[napi(js_name = "ref")]
    pub start_ref: Option<String>,
    /// For this clone only: written to no config, URL, log or container.
    pub credentials: Option<GitCredentials>,
    /// PEM certificate(s) trusted for HTTPS in addition to the system's roots.
    pub ca_certificate: Option<String>,
    /// The clone's time bound (default 600000).
    pub timeout_ms: Option<f64>,
}

/// `create`'s `ref`, given at the top or in `repository` (the same if both).
pub fn start_ref(
    top: Option<String>,
    repository: Option<&RepositoryOptions>,
) -> Result<Option<String>> {
    match (top, repository.and_then(|r| r.start_ref.clone())) {
        (Some(a), Some(b)) if a != b => Err(crate::error::Error::invalid_argument(format!(
            "ref {a:?} and repository.ref {b:?} differ"
        ))),
        (a, b) => Ok(a.or(b)),
    }
}

impl RepositoryOptions {
    pub fn transfer(self) -> Result<Transfer> {
        transfer_from(
            &self.url,
            self.credentials,
            self.ca_certificate,
            self.timeout_ms,
        )
    }
}

/// A session's workspace as `create`, `get` and `list` report it.
#[napi(object)]
pub struct WorkspaceInfo {
    /// The session's id.
    pub session_id: String,
    /// The host project the clone was made from.
    pub project_dir: String,
    /// The session's clone on the host.
    pub clone_path: String,
    /// The clone's branch, `session-<id>`.
    pub branch_name: String,
    /// The commit the session branch started at (the base of `changes`); absent for a
    /// session created before it was recorded.
    pub base_commit: Option<String>,
    /// For a session made from `repository`: its URL (`projectDir` is then the library's
    /// own clone of it, under `baseDir/repositories`).
    pub repository_url: Option<String>,
    /// For a session made from a plain folder (no git repository, or one without a
    /// commit) by its snapshot: that folder, which is only read (`projectDir` is then the
    /// library's repository of the snapshot, under `baseDir/repositories`).
    pub snapshot_of: Option<String>,
    /// The container's name.
    pub container_id: String,
    /// Where the clone is mounted in the container (`/workspace` unless devcontainer.json
    /// says otherwise).
    pub container_mount_path: String,
    /// Where the repository lives for the container: the host clone bind-mounted, a copy
    /// in the engine volume `volume`, or (`pod`, a session on Kubernetes) a copy in the Pod's
    /// own file system (`clonePath` then holds the copy last read back).
    #[napi(ts_type = "'bind' | 'volume' | 'pod'")]
    pub storage: String,
    /// With `volume` storage: the engine volume's name.
    pub volume: Option<String>,
    /// The container's state now; `missing` when it was removed.
    #[napi(ts_type = "'created' | 'running' | 'stopped' | 'failed' | 'missing'")]
    pub state: String,
    /// The image the container runs.
    pub image: String,
    /// `process`: removed when the creating process ends; `session`: kept until `destroy`.
    #[napi(ts_type = "'process' | 'session'")]
    pub lifetime: String,
    /// Unix milliseconds.
    pub created_at_ms: f64,
    /// What the session's devcontainer.json holds that is not acted on.
    pub warnings: Vec<String>,
    /// Container ports this process serves on the host (devcontainer.json's `forwardPorts`
    /// and `appPort`, and `forwardPort`'s).
    pub ports: Vec<ForwardedPort>,
    /// The limits the session's container has (`memory` may come from devcontainer.json's
    /// `runArgs --memory` when the host sets none); empty for a session from before limits.
    pub resources: Resources,
}

/// A container port served on the host.
#[napi(object)]
pub struct ForwardedPort {
    /// The port in the container.
    pub container_port: u32,
    /// The address listened on.
    pub host_ip: String,
    /// The port listened on.
    pub host_port: u32,
}

impl From<workspace::WorkspaceInfo> for WorkspaceInfo {
    fn from(info: workspace::WorkspaceInfo) -> Self {
        let r = info.record;
        WorkspaceInfo {
            session_id: r.session_id,
            project_dir: r.project_dir,
            clone_path: r.clone_path,
            branch_name: r.branch_name,
            base_commit: r.base_commit,
            repository_url: r.repository_url,
            snapshot_of: r.snapshot_of,
            container_id: r.container_id,
            container_mount_path: r.container_mount_path,
            storage: r.storage.as_str().to_string(),
            volume: r.volume,
            state: info.state,
            image: r.image,
            lifetime: r.lifetime,
            created_at_ms: r.created_at_ms as f64,
            resources: r
                .settings
                .as_ref()
                .map(|s| {
                    let mut limits = s.resources;
                    limits.memory = s.effective_memory();
                    Resources::from(limits)
                })
                .unwrap_or_else(|| Resources::from(r.pod_resources)),
            warnings: r.settings.map(|s| s.warnings).unwrap_or_default(),
            ports: info
                .ports
                .into_iter()
                .map(|(container_port, host)| ForwardedPort {
                    container_port: u32::from(container_port),
                    host_ip: host.ip().to_string(),
                    host_port: u32::from(host.port()),
                })
                .collect(),
        }
    }
}
