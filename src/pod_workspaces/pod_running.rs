//! A session's Pod brought to running: made from its record (the clone copied in), started
//! again, or made again where it went, each fresh Pod running the lifecycle's creation
//! steps; and its workspace read back into the host clone while it runs.

use std::path::PathBuf;

use super::pod_sessions::PodWorkspaces;
use super::pod_settings::pod_config;
use super::pod_tree::{copy_in, read_back};
use crate::container_runtime::ContainerRuntime;
use crate::error::{ErrorCode, Result};
use crate::progress::{Phase, Progress};
use crate::runtime::ContainerState;
use crate::workspace::WorkspaceRecord;

impl PodWorkspaces {
    /// The clone copied into the running Pod, owned by the session's user.
    pub(super) async fn copy_clone_in(&self, record: &WorkspaceRecord) -> Result<()> {
        let owner = self.workspace_owner(record).await?;
        let clone = PathBuf::from(&record.clone_path);
        let folder = record.container_mount_path.as_str();
        copy_in(&self.runtime, &record.container_id, (&clone, folder), owner).await
    }

    /// The clone copied in and the relay attached, at once (both wait for the Pod's agent,
    /// started once), then the creation steps, which may use both.
    async fn fill_and_run(&self, record: &WorkspaceRecord, progress: &Progress) -> Result<()> {
        let (copied, relayed) = tokio::join!(self.copy_clone_in(record), self.attach_relay(record));
        copied.and(relayed)?;
        self.run_creation_steps(record, progress).await
    }

    /// A new Pod for the record, given the clone, its relay attached and its creation
    /// steps run.
    pub(super) async fn bring_up(
        &self,
        record: &WorkspaceRecord,
        progress: &Progress,
    ) -> Result<()> {
        let config = pod_config(record, self.pod_variables(record));
        let creating = format!("creating Pod {}", record.container_id);
        progress.step(Phase::Create, &creating);
        let services = record.compose.as_ref();
        self.runtime.create_with_services(config, services).await?;
        progress.step(Phase::Create, "copying the repository into the Pod");
        self.fill_and_run(record, progress).await
    }

    /// The session's Pod running with its workspace: started again (a fresh file system,
    /// given the host clone, its creation steps run) or made again where it went.
    pub(super) async fn ensure_running(&self, record: &WorkspaceRecord) -> Result<()> {
        let pod = &record.container_id;
        match self.runtime.inspect(pod).await {
            Ok(info) if info.state == ContainerState::Running => self.attach_relay(record).await,
            Ok(_) => {
                self.runtime.start(pod).await?;
                self.fill_and_run(record, &Progress::none()).await
            }
            Err(err) if err.code == ErrorCode::ContainerNotFound => {
                self.bring_up(record, &Progress::none()).await
            }
            Err(err) => Err(err),
        }
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
