//! Volumes left by a local-engine probe (`crate::engine::PROBE_LABEL`) whose process died
//! between making and removing one. A probe lasts milliseconds, so one older than a minute
//! is no longer anyone's.

use std::time::Duration;

use crate::engine::{Engine, PROBE_LABEL};
use crate::workspace_volume::{labelled_volumes, remove_volume};

const ABANDONED_AFTER: Duration = Duration::from_secs(60);

/// Removes (or, in a dry run, lists) the abandoned probe volumes; failures are left for the
/// next pass.
pub async fn reap_probe_volumes(engine: &Engine, dry_run: bool) -> Vec<String> {
    let Ok(volumes) = labelled_volumes(engine, &[PROBE_LABEL.to_string()]).await else {
        return Vec::new();
    };
    let now = chrono::Utc::now().timestamp_millis();
    let mut removed = Vec::new();
    for (name, labels) in volumes {
        let made = labels
            .get(PROBE_LABEL)
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0);
        if now.saturating_sub(made) < ABANDONED_AFTER.as_millis() as i64 {
            continue;
        }
        if dry_run || remove_volume(engine, &name).await.is_ok() {
            removed.push(name);
        }
    }
    removed
}
