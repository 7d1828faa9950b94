//! Making and starting a session's container from its stored settings: the image (built
//! when it is missing), every mount source checked again, the lifecycle commands in
//! order, and no container left behind when any of it fails.

use std::path::Path;

use super::feature_image::ensure_feature_image;
use super::image_build::build_image;
use super::lifecycle_runner::{run_on_host, InContainer};
use super::session_settings::{ImageChoice, SessionSettings};
use super::workspace_record::WorkspaceRecord;
use crate::engine::Engine;
use crate::error::{ErrorCode, Result};
use crate::runtime::{ContainerRuntime, ContainerState, DockerRuntime, Lifetime};

pub struct SessionContainer<'a> {
    pub runtime: &'a DockerRuntime,
    pub engine: &'a Engine,
    pub record: &'a WorkspaceRecord,
    pub settings: &'a SessionSettings,
}

impl SessionContainer<'_> {
    fn clone_path(&self) -> &Path {
        Path::new(&self.record.clone_path)
    }

    fn runner(&self) -> InContainer<'_> {
        InContainer {
            engine: self.engine,
            container: &self.record.container_id,
            user: self.settings.remote_user(),
            cwd: &self.settings.workspace_folder,
            env: &self.settings.remote_env,
        }
    }

    /// The image, built from the project when it is a built one and `rebuild` is asked for
    /// or it is gone, then its features installed in a derived image: the name of the
    /// image the container is made from.
    async fn ensure_image(&self, rebuild: bool) -> Result<String> {
        if let ImageChoice::Built { tag, build } = &self.settings.image {
            let present = self.engine.docker().inspect_image(tag).await.is_ok();
            if rebuild || !present {
                build_image(self.engine, build, tag).await?;
            }
        }
        let project = Path::new(&self.record.project_dir);
        ensure_feature_image(
            self.engine,
            self.settings.image.name(),
            self.settings,
            project,
        )
        .await
    }

    /// Creates, starts and initialises the container (`initializeCommand` first, on the
    /// host, only when the settings hold it: the host allowed it). `rebuild`: build a built
    /// image even if it exists (a new session picks up the project's Dockerfile).
    pub async fn create(&self, lifetime: Lifetime, rebuild: bool) -> Result<()> {
        let record = self.record;
        if let Some(init) = &self.settings.lifecycle.initialize {
            run_on_host(Path::new(&record.project_dir), init).await?;
        }
        let image = self.ensure_image(rebuild).await?;
        self.settings.verify_mounts(self.clone_path())?;
        let mut config = self.settings.container_config();
        config.image = Some(image);
        config.name = Some(record.container_id.clone());
        config.lifetime = lifetime;
        config.session_id = Some(record.session_id.clone());
        config.clone_path = Some(record.clone_path.clone());
        config.project_dir = Some(record.project_dir.clone());
        match self.runtime.create(config).await {
            Ok(_) => {}
            // Another process made it first: use that one.
            Err(err) if err.code == ErrorCode::Eexist => return Ok(()),
            Err(err) => return Err(err),
        }
        let initialised = async {
            self.runtime.start(&record.container_id).await?;
            let lifecycle = &self.settings.lifecycle;
            let runner = self.runner();
            runner.run("onCreateCommand", &lifecycle.on_create).await?;
            runner
                .run("updateContentCommand", &lifecycle.update_content)
                .await?;
            runner
                .run("postCreateCommand", &lifecycle.post_create)
                .await?;
            runner.run("postStartCommand", &lifecycle.post_start).await
        }
        .await;
        if let Err(err) = initialised {
            // Leave no container behind; the clone (the session's work) stays.
            let _ = self.runtime.remove(&record.container_id).await;
            return Err(err);
        }
        Ok(())
    }

    /// Starts a stopped container, its mount sources checked again first, with
    /// `postStartCommand` as a start runs it.
    pub async fn start(&self) -> Result<()> {
        let id = &self.record.container_id;
        if self.runtime.inspect(id).await?.state == ContainerState::Running {
            return Ok(());
        }
        self.settings.verify_mounts(self.clone_path())?;
        self.runtime.start(id).await?;
        self.runner()
            .run("postStartCommand", &self.settings.lifecycle.post_start)
            .await
    }
}
