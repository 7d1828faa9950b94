//! `Workspaces.prune` (docs/contract.md §6): converts its options and report; the work is
//! `crate::workspace`'s.

use napi_derive::napi;

use super::durations::duration_ms;
use super::error::Outcome;
use super::workspaces::Workspaces;
use crate::session_images::PruneRequest;

/// Options of `Workspaces.prune`.
#[napi(object, object_to_js = false)]
pub struct PruneOptions {
    /// Only images built at least this long ago (default: any age).
    pub older_than_ms: Option<f64>,
    /// Report what would be removed, remove nothing.
    pub dry_run: Option<bool>,
}

/// What `Workspaces.prune` removed and kept.
#[napi(object, object_from_js = false)]
pub struct PruneResult {
    /// The images removed (or that would be, with `dryRun`): their tags, an untagged
    /// one's id.
    pub images_removed: Vec<String>,
    /// This base directory's images kept: used by a container (running or not, also as
    /// the base of its image), too recent, or refused by the engine.
    pub kept: Vec<String>,
}

#[napi]
impl Workspaces {
    /// Removes the images this library built for sessions of this base directory
    /// (devcontainer builds, features images, uid images) that no container uses. Never
    /// touches an image without this library's labels or of another base directory.
    #[napi(ts_return_type = "Promise<PruneResult>")]
    pub async fn prune(&self, opts: Option<PruneOptions>) -> Outcome<PruneResult> {
        let inner = self.on_engine("prune");
        async move {
            let inner = inner?;
            let (older_than_ms, dry_run) = match opts {
                Some(o) => (o.older_than_ms, o.dry_run.unwrap_or(false)),
                None => (None, false),
            };
            let request = PruneRequest {
                older_than: duration_ms(older_than_ms, "olderThanMs")?,
                dry_run,
            };
            let report = inner.prune(request).await?;
            Ok(PruneResult {
                images_removed: report.images_removed,
                kept: report.kept,
            })
        }
        .await
        .into()
    }
}
