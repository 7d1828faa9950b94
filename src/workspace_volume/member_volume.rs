//! A warm pool member's volume (volume storage): named after the member as a session's is
//! after its container, and removed with the member while no session has claimed it. A
//! claimed member is renamed to its session's container; its volume is the session's and
//! is never removed here.

use super::volume_store::{remove_volume, volume_labels_of, volume_name};
use crate::engine::Engine;
use crate::runtime::labels;
use crate::runtime::pool_member::MEMBER_PREFIX;

/// Removes the volume of the unclaimed member `member` (a `wp-` name), if it has one that
/// names it as its container; anything else is left alone.
pub async fn remove_member_volume(engine: &Engine, member: &str) {
    if !member.starts_with(MEMBER_PREFIX) {
        return;
    }
    let volume = volume_name(member);
    let Ok(Some(labels_of)) = volume_labels_of(engine, &volume).await else {
        return;
    };
    if labels_of.get(labels::CONTAINER).map(String::as_str) == Some(member) {
        if let Err(err) = remove_volume(engine, &volume).await {
            tracing::warn!("warm pool member '{member}': volume '{volume}' not removed: {err}");
        }
    }
}
