//! devcontainer.json's lifecycle commands in a session's Pod, as its remote user with its
//! remote environment (`userEnvProbe`, `remoteEnv` over the Pod's own). Every Pod is a
//! fresh container (a stopped session's Pod is made again from its clone), so each one
//! runs the creation steps (`onCreateCommand` to `postStartCommand`); `postAttachCommand`
//! runs on each `environment()`.

use super::pod_sessions::PodWorkspaces;
use crate::container_archive::EntryOwner;
use crate::container_runtime::{ContainerRuntime, RuntimeContainer};
use crate::error::Result;
use crate::kubernetes::{pod_user, KubernetesRuntime};
use crate::progress::Progress;
use crate::session_settings::{RemoteEnv, SessionSettings};
use crate::workspace::{InContainer, WorkspaceRecord, CREATE_STEPS};

impl PodWorkspaces {
    fn target<'a>(
        &'a self,
        record: &'a WorkspaceRecord,
    ) -> RuntimeContainer<'a, KubernetesRuntime> {
        RuntimeContainer {
            runtime: &self.runtime,
            id: &record.container_id,
        }
    }

    /// The environment the session's commands run with in its running Pod, read once per
    /// Pod start.
    pub(super) async fn remote_env(
        &self,
        record: &WorkspaceRecord,
        settings: &SessionSettings,
    ) -> Result<RemoteEnv> {
        let info = self.runtime.inspect(&record.container_id).await?;
        let started = info.started_at.map(|t| t.to_rfc3339()).unwrap_or_default();
        let started = format!("{}@{started}", info.engine_id);
        let target = self.target(record);
        Ok(self.probes.target_env(&target, started, settings).await)
    }

    /// The given steps of the session's lifecycle, in order; nothing for a session without
    /// devcontainer.json.
    async fn run_steps(
        &self,
        record: &WorkspaceRecord,
        steps: &[&str],
        progress: &Progress,
    ) -> Result<()> {
        let Some(settings) = &record.settings else {
            return Ok(());
        };
        let env = self.remote_env(record, settings).await?;
        let runner = InContainer {
            target: self.target(record),
            user: settings.remote_user(),
            cwd: &settings.workspace_folder,
            env: &env,
            progress,
        };
        for step in steps {
            runner.run(step, &settings.commands_of(step)).await?;
        }
        Ok(())
    }

    /// The creation steps of a fresh Pod.
    pub(super) async fn run_creation_steps(
        &self,
        record: &WorkspaceRecord,
        progress: &Progress,
    ) -> Result<()> {
        self.run_steps(record, &CREATE_STEPS, progress).await
    }

    /// `postAttachCommand`, as a session is handed out.
    pub(super) async fn run_attach_step(&self, record: &WorkspaceRecord) -> Result<()> {
        self.run_steps(record, &["postAttachCommand"], &Progress::none())
            .await
    }

    /// Who the workspace is copied in as: the remote user (its ids from the image's
    /// accounts), else root.
    pub(super) async fn workspace_owner(&self, record: &WorkspaceRecord) -> Result<EntryOwner> {
        let user = record.settings.as_ref().and_then(|s| s.remote_user());
        match user {
            None => Ok(EntryOwner { uid: 0, gid: 0 }),
            Some(user) => {
                let ids = pod_user(&self.runtime, &record.container_id, Some(user)).await?;
                Ok(EntryOwner {
                    uid: ids.uid,
                    gid: ids.gid,
                })
            }
        }
    }
}
