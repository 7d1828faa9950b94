//! A session made: its clone, its settings (devcontainer.json under the host's trust, the
//! image prepared, the image's `devcontainer.metadata` merged), stored with its record
//! before its container is made; and a removed container made again from those settings.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use super::compose_config::read_compose_session;
use super::idle_tracker::IdleOwner;
use super::session_container::prepare_image;
use super::workspace_record::{self as record, WorkspaceRecord};
use super::workspace_storage::{volume_name, Storage};
use super::workspaces::{blocking_error, CreateWorkspace, WorkspaceInfo, Workspaces};
use crate::clone::{branch_name, validate_session_id};
use crate::compose_services::StoredServices;
use crate::devcontainer::{read_for_session, DEFAULT_WORKSPACE_FOLDER};
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::Lifetime;
use crate::session_images::{ensure_uid_image, ImageSupply};
use crate::session_settings::{
    engine_sockets, merge_image_metadata, plain_settings, read_image_metadata, resolve_settings,
    settle_resources, SessionSettings, SettingsRequest, Trust,
};

impl Workspaces {
    /// Idempotent per session: an existing workspace is started if stopped, and its
    /// container recreated, with the settings it was created with, if it was removed.
    pub async fn create(self: &Arc<Self>, request: CreateWorkspace) -> Result<WorkspaceInfo> {
        validate_session_id(&request.session_id)?;
        request.resources.validate("resources")?;
        let _creating = self.pool_pause();
        if let Some(idle) = &self.idle {
            idle.touch(&request.session_id);
            let owner: Weak<dyn IdleOwner> = Arc::downgrade(self) as Weak<Workspaces>;
            idle.ensure_running(owner);
        }
        let lock = self.lock_for(&request.session_id);
        let _guard = lock.lock().await;
        let base = &self.options.base_dir;
        let supply = self.supply(&request.session_id, request.pull, request.progress.as_ref());
        if let Some(existing) = record::load(base, &request.session_id)? {
            if let Some(egress) = request.egress.clone() {
                drop(_guard);
                self.set_egress(&request.session_id, egress).await?;
                return Box::pin(self.create(CreateWorkspace {
                    egress: None,
                    ..request
                }))
                .await;
            }
            if self.state_of(&existing.container_id).await? == "missing" {
                return self.recreate(existing, supply).await;
            }
            self.ensure_started(&existing).await?;
            return self.info(existing).await;
        }
        if let Some(text) = &request.start_ref {
            crate::delivery::validate_ref(text)?;
        }
        let egress = self.egress_for_new(&request)?;
        let source = self.session_source(&request).await?;
        let project = source.project.clone();
        let clones = self.clones.clone();
        let (project_for_clone, id, start) = (
            project.clone(),
            request.session_id.clone(),
            source.start.clone(),
        );
        let (clone_path, start_commit) = tokio::task::spawn_blocking(move || {
            clones.create_session_clone_at(&project_for_clone, &id, start.as_deref())
        })
        .await
        .map_err(blocking_error)??;
        let engine = self.runtime.engine().await?;
        let trust = request.trust.as_ref().unwrap_or(&self.options.trust);
        let (mut settings, compose) = self
            .resolve(&engine, &request, &project, &clone_path, (trust, &supply))
            .await?;
        self.settle_egress(&request.session_id, &mut settings, egress);
        settle_resources(
            &engine,
            &mut settings,
            request.resources,
            self.options.resources,
        )
        .await;
        let container_id = self.container_name(&request.session_id);
        let storage = self.options.storage.resolve(&engine);
        let volume = (storage == Storage::Volume).then(|| volume_name(&container_id));
        let mut record = WorkspaceRecord {
            session_id: request.session_id.clone(),
            project_dir: project.to_string_lossy().into_owned(),
            clone_path: clone_path.to_string_lossy().into_owned(),
            branch_name: branch_name(&request.session_id),
            base_commit: Some(start_commit.to_string()),
            repository_url: request
                .repository
                .as_ref()
                .map(|t| t.url.as_str().to_string()),
            snapshot_of: source
                .snapshot_of
                .map(|folder| folder.to_string_lossy().into_owned()),
            container_id,
            container_mount_path: settings.mount_path.clone(),
            storage,
            volume,
            image: settings.image.name().to_string(),
            lifetime: request.lifetime.as_str().to_string(),
            devcontainer: settings.config_path.is_some(),
            created_at_ms: chrono::Utc::now().timestamp_millis(),
            settings: Some(settings),
            compose,
            checkpoint_image: None,
            owner: record::owner_for(request.lifetime),
            pod_env: Default::default(),
            pod_resources: Default::default(),
            pod_egress: None,
        };
        let mut container = self.session_container(&engine, &record)?;
        container.supply = supply;
        let claimed_volume = self.create_or_claim(&container, request.lifetime).await?;
        if let Some(volume) = claimed_volume {
            record.volume = Some(volume);
        }
        record::save(base, &record)?;
        self.forward_configured(&record).await?;
        self.info(record).await
    }

    /// The settings of a new session: the project's devcontainer.json (read from the
    /// project, which the agent cannot write) checked against `trust`, its image prepared
    /// (`initializeCommand`, a pull or a build) and the image's metadata merged; or the
    /// plain ones, their image pulled as the policy says.
    async fn resolve(
        &self,
        engine: &Engine,
        request: &CreateWorkspace,
        project: &Path,
        clone: &Path,
        (trust, supply): (&Trust, &ImageSupply),
    ) -> Result<(SessionSettings, Option<StoredServices>)> {
        let config = if request.devcontainer {
            let (at, local_folder, allowed) = (
                project.to_path_buf(),
                clone.to_path_buf(),
                trust.local_env.clone(),
            );
            tokio::task::spawn_blocking(move || read_for_session(&at, &local_folder, &allowed))
                .await
                .map_err(blocking_error)??
        } else {
            None
        };
        let sockets = engine_sockets(engine);
        let (config, compose) = match config {
            Some(config) if config.compose.is_some() => {
                let (project, clone, trust, sockets) = (
                    project.to_path_buf(),
                    clone.to_path_buf(),
                    trust.clone(),
                    sockets.clone(),
                );
                let session = tokio::task::spawn_blocking(move || {
                    read_compose_session(&config, &project, &clone, &trust, &sockets)
                })
                .await
                .map_err(blocking_error)??;
                (Some(session.config), Some(session.services))
            }
            other => (other, None),
        };
        let settings_request = SettingsRequest {
            project,
            clone,
            image: request.image.as_deref(),
            default_image: self.options.image.as_deref(),
            env: &request.env,
            network: request.network.as_deref(),
            trust,
            engine_sockets: &sockets,
            session_id: &request.session_id,
            mount_path: DEFAULT_WORKSPACE_FOLDER,
        };
        let Some(config) = &config else {
            let settings = plain_settings(&settings_request)?;
            prepare_image(engine, project, &settings, false, supply).await?;
            return Ok((settings, None));
        };
        let mut settings = resolve_settings(&settings_request, config)?;
        let image = prepare_image(engine, project, &settings, true, supply).await?;
        settings.feature_image = Some(image.clone()).filter(|i| i != settings.image.name());
        let entries = read_image_metadata(engine, &image).await?;
        merge_image_metadata(&settings_request, &mut settings, &image, &entries)?;
        if let Some(derived) = settings.uid_image_wanted() {
            ensure_uid_image(&derived, engine, &image, supply).await?;
            settings.uid_image = Some(derived);
        }
        Ok((settings, compose))
    }

    /// A new container for a session whose container was removed: the stored settings
    /// (a record from before settings were kept gets them resolved from the project).
    async fn recreate(
        &self,
        mut existing: WorkspaceRecord,
        supply: ImageSupply,
    ) -> Result<WorkspaceInfo> {
        let engine = self.runtime.engine().await?;
        if existing.settings.is_none() {
            let request = CreateWorkspace {
                project_dir: existing.project_dir.clone(),
                session_id: existing.session_id.clone(),
                image: Some(existing.image.clone()).filter(|_| !existing.devcontainer),
                devcontainer: existing.devcontainer,
                ..Default::default()
            };
            let (project, clone) = (
                PathBuf::from(&existing.project_dir),
                PathBuf::from(&existing.clone_path),
            );
            let (settings, compose) = self
                .resolve(
                    &engine,
                    &request,
                    &project,
                    &clone,
                    (&self.options.trust, &supply),
                )
                .await?;
            existing.settings = Some(settings);
            existing.compose = compose;
        } else if let Some(settings) = &mut existing.settings {
            let project = Path::new(&existing.project_dir);
            let image = prepare_image(&engine, project, settings, false, &supply).await?;
            settings.feature_image = Some(image).filter(|i| i != settings.image.name());
        }
        let lifetime = Lifetime::parse(&existing.lifetime).unwrap_or_default();
        let mut container = self.session_container(&engine, &existing)?;
        container.supply = supply;
        container.create(lifetime).await?;
        record::save(&self.options.base_dir, &existing)?;
        self.forward_configured(&existing).await?;
        self.info(existing).await
    }
}
