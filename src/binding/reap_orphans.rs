//! `reapOrphans` (docs/contract.md §6).

use napi_derive::napi;

use std::collections::HashSet;

use super::engine::{engine_options, EngineOptions};
use super::error::Outcome;
use super::kubernetes_runtime::{kubernetes_options, KubernetesOptions};
use crate::base_dir::resolve_base_dir;
use crate::kubernetes::KubernetesRuntimeOptions;
use crate::pod_workspaces::{PodWorkspaces, PodWorkspacesOptions};
use crate::reaper;

/// Options of `reapOrphans`.
#[napi(object, object_to_js = false)]
pub struct ReapOrphansOptions {
    /// Whose containers to judge; default `$CONTAINER_ISOLATION_HOME`, else
    /// `~/.container-isolation`.
    pub base_dir: Option<String>,
    /// Which engine to talk to; default: auto-detected (see `detectEngine`).
    pub engine: Option<EngineOptions>,
    /// When given, `session` containers of sessions not listed are removed too.
    pub active_session_ids: Option<Vec<String>>,
    /// Report what would be removed without removing anything.
    pub dry_run: Option<bool>,
}

/// What `reapOrphans` did (or, with `dryRun`, would do).
#[napi(object)]
pub struct ReapReport {
    /// Names of the containers removed.
    pub containers_removed: Vec<String>,
    /// Paths of the session clones moved to trash.
    pub clones_trashed: Vec<String>,
    /// Names of this base directory's containers left alone.
    pub kept: Vec<String>,
    /// Names of the session volumes removed (`storage: 'volume'` sessions whose container
    /// and workspace are gone).
    pub volumes_removed: Vec<String>,
}

/// Removes this base directory's orphaned containers: `process` ones whose owner process is
/// gone (same host), `session` ones not in `activeSessionIds` when that is given. Containers
/// of other base directories and unlabelled ones are never touched. With `engine: {
/// kubernetes }`, the sessions on that cluster: the host Leases of dead processes deleted, a
/// `process` session whose owner is gone loses its Pod, clone and record; `containersRemoved`
/// names Pods.
#[napi(ts_return_type = "Promise<ReapReport>")]
pub async fn reap_orphans(opts: Option<ReapOrphansOptions>) -> Outcome<ReapReport> {
    async {
        let opts = opts.unwrap_or(ReapOrphansOptions {
            base_dir: None,
            engine: None,
            active_session_ids: None,
            dry_run: None,
        });
        if let Some(cluster) = opts.engine.as_ref().and_then(|e| e.kubernetes.clone()) {
            return reap_on_cluster(&opts, cluster).await;
        }
        let options = reaper::ReapOptions {
            base_dir: resolve_base_dir(opts.base_dir.as_deref()),
            engine: engine_options(opts.engine)?,
            active_session_ids: opts.active_session_ids.map(|ids| ids.into_iter().collect()),
            dry_run: opts.dry_run.unwrap_or(false),
        };
        let report = reaper::reap_orphans(&options).await?;
        Ok(ReapReport {
            containers_removed: report.containers_removed,
            clones_trashed: report.clones_trashed,
            kept: report.kept,
            volumes_removed: report.volumes_removed,
        })
    }
    .await
    .into()
}

/// The sessions of `engine: { kubernetes }` under the base directory, as
/// `PodWorkspaces::reap_orphans` judges them.
async fn reap_on_cluster(
    opts: &ReapOrphansOptions,
    cluster: KubernetesOptions,
) -> crate::error::Result<ReapReport> {
    let cluster = kubernetes_options(Some(cluster))
        .map_err(|e| crate::error::Error::invalid_argument(e.reason.clone()))?;
    let pods = PodWorkspaces::new(PodWorkspacesOptions {
        base_dir: resolve_base_dir(opts.base_dir.as_deref()),
        runtime: KubernetesRuntimeOptions {
            cluster,
            ..Default::default()
        },
        ..Default::default()
    });
    let active: Option<HashSet<String>> = opts
        .active_session_ids
        .as_ref()
        .map(|ids| ids.iter().cloned().collect());
    let report = pods
        .reap_orphans(active.as_ref(), opts.dry_run.unwrap_or(false))
        .await?;
    Ok(ReapReport {
        containers_removed: report.pods_removed,
        clones_trashed: report.clones_trashed,
        kept: report.kept,
        volumes_removed: Vec::new(),
    })
}

/// Whether the process that created a container (judged from its labels as `reapOrphans`
/// judges it: pid, process start time and boot id) is `alive`, `gone`, or `unknown`
/// (another host, or no owner labels).
#[napi(
    ts_args_type = "labels: Record<string, string>",
    ts_return_type = "'alive' | 'gone' | 'unknown'"
)]
pub fn owner_status(labels: std::collections::HashMap<String, String>) -> &'static str {
    match crate::runtime::owner_status(&labels, crate::runtime::OwnerIdentity::current()) {
        crate::runtime::OwnerStatus::Alive => "alive",
        crate::runtime::OwnerStatus::Gone => "gone",
        crate::runtime::OwnerStatus::Unknown => "unknown",
    }
}
