//! A session's Pod brought to running: made from its record (the clone copied in), started
//! again, or made again where it went; and its workspace read back into the host clone while
//! it runs.

use std::path::PathBuf;

use super::pod_sessions::PodWorkspaces;
use super::pod_tree::{copy_in, read_back};
use crate::container_runtime::{ContainerConfig, ContainerRuntime};
use crate::error::{ErrorCode, Result};
use crate::progress::{Phase, Progress};
use crate::runtime::{ContainerState, Lifetime};
use crate::workspace::WorkspaceRecord;

impl PodWorkspaces {
    /// A new Pod for the record, given the host clone.
    pub(super) async fn make_pod(
        &self,
        record: &WorkspaceRecord,
        progress: &Progress,
    ) -> Result<()> {
        let config = ContainerConfig {
            name: Some(record.container_id.clone()),
            image: Some(record.image.clone()),
            working_directory: record.container_mount_path.clone(),
            // No route out: connections go through the relay (`pod_egress`), and the
            // deny-all NetworkPolicy selects the Pod.
            network: Some("none".to_string()),
            environment: self.pod_variables(record),
            resources: record.pod_resources,
            lifetime: Lifetime::parse(&record.lifetime).unwrap_or_default(),
            ..Default::default()
        };
        let creating = format!("creating Pod {}", record.container_id);
        progress.step(Phase::Create, &creating);
        self.runtime.create(config).await?;
        progress.step(Phase::Create, "copying the repository into the Pod");
        let clone = PathBuf::from(&record.clone_path);
        copy_in(
            &self.runtime,
            &record.container_id,
            &clone,
            &record.container_mount_path,
        )
        .await
    }

    /// The session's Pod running with its workspace: started again (a fresh file system,
    /// given the host clone) or made again where it went.
    pub(super) async fn ensure_running(&self, record: &WorkspaceRecord) -> Result<()> {
        let pod = &record.container_id;
        match self.runtime.inspect(pod).await {
            Ok(info) if info.state == ContainerState::Running => {}
            Ok(_) => {
                self.runtime.start(pod).await?;
                let clone = PathBuf::from(&record.clone_path);
                copy_in(&self.runtime, pod, &clone, &record.container_mount_path).await?;
            }
            Err(err) if err.code == ErrorCode::ContainerNotFound => {
                self.make_pod(record, &Progress::none()).await?
            }
            Err(err) => return Err(err),
        }
        self.attach_relay(record).await
    }

    /// The Pod's workspace as the host clone, where the Pod runs (a stopped or missing Pod's
    /// work was read back when it stopped).
    pub(super) async fn read_back_running(&self, record: &WorkspaceRecord) -> Result<()> {
        if self.state_of(&record.container_id).await? != "running" {
            return Ok(());
        }
        read_back(
            &self.runtime,
            &record.container_id,
            &record.container_mount_path,
            &PathBuf::from(&record.clone_path),
            &record.session_id,
        )
        .await
    }
}
