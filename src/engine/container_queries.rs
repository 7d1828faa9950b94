//! Inspecting and listing containers, through Podman's extra state.
//!
//! Podman reports a container whose main process has exited but which its cleanup has not
//! reached yet as `stopped`, a state the Docker API does not have, so bollard cannot read
//! the answer. It settles to `exited` within moments: these calls ask again meanwhile.

use std::time::Duration;

use bollard::models::{ContainerInspectResponse, ContainerSummary};
use bollard::query_parameters::ListContainersOptions;

use super::connection::Engine;
use crate::error::{Error, Result};

/// How long an answer may keep naming Podman's `stopped` before it is reported as is.
const SETTLE_LIMIT: Duration = Duration::from_secs(3);

fn names_podman_stopped(err: &Error) -> bool {
    err.message.contains("unknown variant `stopped`")
}

impl Engine {
    async fn settled<T, F, Fut>(&self, subject: &str, mut call: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, bollard::errors::Error>>,
    {
        let deadline = tokio::time::Instant::now() + SETTLE_LIMIT;
        let mut delay = Duration::from_millis(10);
        loop {
            match self.call(subject, call()).await {
                Err(err)
                    if names_podman_stopped(&err) && tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_millis(200));
                }
                other => return other,
            }
        }
    }

    /// `GET /containers/{id}/json`, `subject` naming it in errors.
    pub async fn inspect_container(
        &self,
        id: &str,
        subject: &str,
    ) -> Result<ContainerInspectResponse> {
        self.settled(subject, || self.docker().inspect_container(id, None))
            .await
    }

    /// `GET /containers/json`.
    pub async fn list_containers(
        &self,
        options: ListContainersOptions,
        subject: &str,
    ) -> Result<Vec<ContainerSummary>> {
        self.settled(subject, || {
            self.docker().list_containers(Some(options.clone()))
        })
        .await
    }
}
