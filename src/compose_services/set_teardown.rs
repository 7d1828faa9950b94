//! Ending a service set, found by its label as the reaper finds it: stopping (services
//! first, then the holder; volumes kept), or removing every container labelled with the set
//! (the session container too, when it was made a member), the holder last (Podman refuses
//! to remove it while containers share its namespace), then the set's volumes.

use std::time::Duration;

use futures_util::future::join_all;

use crate::container_runtime::{ContainerRuntime, DockerRuntime};
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::labels::{self, is_set_holder};
use crate::runtime::{managed_containers, remove_quietly, ManagedContainer};
use crate::workspace_volume::{labelled_volumes, remove_volume};

/// How long removing a set waits for removals that were already in progress.
const MEMBERS_GONE: Duration = Duration::from_secs(30);

/// The set's containers, the holder last.
async fn members(engine: &Engine, holder: &str) -> Result<Vec<ManagedContainer>> {
    let filter = format!("{}={holder}", labels::SERVICE_SET);
    let mut listed = managed_containers(engine, &[filter]).await?;
    listed.sort_by_key(|c| is_set_holder(&c.name, &c.labels));
    Ok(listed)
}

/// Removes the set whose holder is `holder`: its containers, then its volumes. Returns the
/// names removed; what is already gone is not an error.
pub async fn remove_service_set(engine: &Engine, holder: &str) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    for container in members(engine, holder).await? {
        if remove_quietly(engine, &container.name).await? {
            removed.push(container.name);
        }
    }
    until_members_gone(engine, holder).await?;
    let filters = [
        format!("{}=true", labels::MANAGED),
        format!("{}={holder}", labels::SERVICE_SET),
    ];
    for (name, _) in labelled_volumes(engine, &filters).await? {
        remove_volume(engine, &name).await?;
        removed.push(name);
    }
    Ok(removed)
}

/// A removal another call already had in progress (the reaper, a concurrent destroy) ends
/// after ours answered; until it has, its container still holds the set's volumes. Waits
/// for the set to be listed empty, at most `MEMBERS_GONE`; the volumes' removal says what
/// is still there after that.
async fn until_members_gone(engine: &Engine, holder: &str) -> Result<()> {
    let deadline = tokio::time::Instant::now() + MEMBERS_GONE;
    while !members(engine, holder).await?.is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// Stops the set's containers (all but the holder at once, then the holder), each within
/// `grace`; its volumes stay for the next start.
pub async fn stop_service_set(
    runtime: &DockerRuntime,
    holder: &str,
    grace: Option<Duration>,
) -> Result<()> {
    let engine = runtime.engine().await?;
    let listed = members(&engine, holder).await?;
    let (holders, others): (Vec<_>, Vec<_>) = listed
        .iter()
        .partition(|c| is_set_holder(&c.name, &c.labels));
    let stops = others.iter().map(|c| runtime.stop(&c.name, grace));
    join_all(stops)
        .await
        .into_iter()
        .collect::<Result<Vec<()>>>()?;
    for holder in holders {
        runtime.stop(&holder.name, grace).await?;
    }
    Ok(())
}
