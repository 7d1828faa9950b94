//! A compose session's services stopped after its container and removed with it (and
//! after a failed create); nothing for a session without them.

use super::workspace_record::WorkspaceRecord;
use crate::compose_services::{holder_name, remove_service_set, stop_service_set};
use crate::container_runtime::DockerRuntime;
use crate::engine::Engine;
use crate::error::Result;

/// Stops a session's services (after its container); nothing for a session without them.
pub async fn stop_services(runtime: &DockerRuntime, record: &WorkspaceRecord) -> Result<()> {
    if record.compose.is_none() {
        return Ok(());
    }
    stop_service_set(runtime, &holder_name(&record.container_id), None).await
}

/// Removes a session's services, their holder and volumes; nothing without them.
pub async fn remove_services(engine: &Engine, record: &WorkspaceRecord) -> Result<()> {
    if record.compose.is_none() {
        return Ok(());
    }
    remove_service_set(engine, &holder_name(&record.container_id))
        .await
        .map(|_| ())
}
