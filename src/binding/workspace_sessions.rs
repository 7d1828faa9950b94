//! What a `Workspaces` runs its sessions on: an engine, or a Kubernetes cluster (`engine:
//! { kubernetes }`). On a cluster, the options only an engine session has are refused by
//! name (`UNSUPPORTED`), never skipped, and the methods that are not there yet reject so.

use std::sync::Arc;

use super::durations::duration_ms;
use super::egress::egress_from_js;
use super::error::{sync_error, Code};
use super::kubernetes_runtime::{kubernetes_options, KubernetesOptions};
use super::progress::{progress_target, pull_policy};
use super::resources::resources_from_js;
use super::trust::host_trust;
use super::warm_pool::pool_options;
use super::workspaces_options::{CreateWorkspaceOptions, WorkspacesOptions};
use crate::base_dir::resolve_base_dir;
use crate::error::{Error, ErrorCode, Result};
use crate::kubernetes::KubernetesRuntimeOptions;
use crate::pod_workspaces::{CreatePodWorkspace, PodWorkspaces, PodWorkspacesOptions};
use crate::runtime::Lifetime;
use crate::session_settings::Trust;
use crate::workspace;

/// The sessions of one `Workspaces`.
pub enum Sessions {
    Engine(Arc<workspace::Workspaces>),
    Pods(Arc<PodWorkspaces>),
}

fn not_on_a_cluster(what: &str) -> Error {
    Error::new(
        ErrorCode::Unsupported,
        format!("{what} is not available for sessions on Kubernetes yet (docs/kubernetes.md)"),
    )
}

/// `UNSUPPORTED` for the first option given that a cluster session cannot have.
fn refuse_given(given: &[(&str, bool)]) -> Result<()> {
    match given.iter().find(|(_, set)| *set) {
        Some((name, _)) => Err(not_on_a_cluster(name)),
        None => Ok(()),
    }
}

impl Sessions {
    /// The engine's sessions; `UNSUPPORTED` naming `what` for sessions on a cluster.
    pub fn on_engine(&self, what: &str) -> Result<Arc<workspace::Workspaces>> {
        match self {
            Sessions::Engine(sessions) => Ok(sessions.clone()),
            Sessions::Pods(_) => Err(not_on_a_cluster(what)),
        }
    }
}

/// The cluster's sessions of `new Workspaces({ engine: { kubernetes } })`.
pub fn pod_sessions(
    opts: WorkspacesOptions,
    cluster: KubernetesOptions,
) -> napi::Result<PodWorkspaces, Code> {
    let engine = opts.engine.as_ref();
    let alone = engine.is_some_and(|e| {
        e.socket_path.is_none()
            && e.host.is_none()
            && e.tls.is_none()
            && e.context.is_none()
            && e.ssh.is_none()
            && e.kind.is_none()
            && e.timeout_ms.is_none()
    });
    if !alone {
        return Err(sync_error(Error::invalid_argument(
            "engine.kubernetes takes no other engine field beside it",
        )));
    }
    refuse_given(&[
        ("watchdog", opts.watchdog.is_some()),
        ("storage", opts.storage.is_some()),
    ])
    .map_err(sync_error)?;
    let pull = pull_policy(opts.pull).map_err(sync_error)?;
    let egress = opts.egress.map(egress_from_js).transpose();
    let resources = resources_from_js(opts.resources, "resources").map_err(sync_error)?;
    let idle_timeout = duration_ms(opts.idle_timeout_ms, "idleTimeoutMs").map_err(sync_error)?;
    let trust = host_trust(opts.trust, opts.allow_host_commands);
    let pool = pool_options(opts.pool).map_err(sync_error)?;
    Ok(PodWorkspaces::new(PodWorkspacesOptions {
        trust,
        pool,
        resources,
        idle_timeout,
        progress: progress_target(opts.on_progress),
        max_checkpoints: opts.max_checkpoints.map(|n| n as usize),
        egress: egress.map_err(sync_error)?.unwrap_or_default(),
        base_dir: resolve_base_dir(opts.base_dir.as_deref()),
        runtime: KubernetesRuntimeOptions {
            cluster: kubernetes_options(Some(cluster))?,
            image: opts.image,
            base_dir: None,
            pull: pull.unwrap_or_default(),
            agent: opts.agent,
        },
    }))
}

/// `create`'s options for a session on a cluster.
pub fn pod_create(opts: CreateWorkspaceOptions) -> Result<CreatePodWorkspace> {
    refuse_given(&[
        ("create's repository", opts.repository.is_some()),
        ("create's plainFolder", opts.plain_folder.is_some()),
        ("create's network", opts.network.is_some()),
        ("create's pull", opts.pull.is_some()),
    ])?;
    let lifetime = match opts.lifetime.as_deref() {
        None => Lifetime::Session,
        Some(text) => Lifetime::parse(text).ok_or_else(|| {
            Error::invalid_argument(format!("lifetime '{text}' is not 'process' or 'session'"))
        })?,
    };
    Ok(CreatePodWorkspace {
        project_dir: opts.project_dir.unwrap_or_default(),
        session_id: opts.session_id,
        start_ref: opts.start_ref,
        image: opts.image,
        devcontainer: opts.devcontainer.unwrap_or(true),
        trust: opts.trust.map(Trust::from),
        env: opts.env.unwrap_or_default().into_iter().collect(),
        lifetime,
        resources: resources_from_js(opts.resources, "resources")?,
        egress: opts.egress.map(egress_from_js).transpose()?,
        progress: progress_target(opts.on_progress),
    })
}
