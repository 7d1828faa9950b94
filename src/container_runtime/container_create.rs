//! `DockerRuntime::create`: the image made sure of, the agent's delivery chosen, a relayed
//! container's network taken away, the line folder made, the container created (again with
//! the image's own command where the image has no shell for our keep-alive), the agent put
//! in and the user checked. A container that fails a step after it was made is removed.

use bollard::models::ContainerCreateBody;
use bollard::query_parameters::RemoveContainerOptionsBuilder;

use super::agent_delivery::AgentDelivery;
use super::container_body::create_body;
use super::container_config::ContainerConfig;
use super::create_checks::{check_network, check_user};
use super::docker_runtime::DockerRuntime;
use super::image_create::{create_container, create_pulling, ensure_for_platform};
use super::new_container_labels::labels_for_new_container;
use super::relayed_network::{check_joined_holder, prepare_relayed};
use crate::egress::Egress;
use crate::engine::{Engine, EngineKind, ImageRequest};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::ensure_mount_source;
use crate::runtime::path_exists;
use crate::runtime::resource_limits::{host_pid_max, podman_nproc};
use crate::runtime::Lifetime;
use crate::runtime::LineFolder;
use crate::runtime::MountKind;
use crate::runtime::{sandbox_command_after, SHELL};

/// What a new container is made with beyond its config.
struct Extras {
    agent: Option<AgentDelivery>,
    line: Option<LineFolder>,
}

impl Extras {
    fn apply(&self, body: &mut ContainerCreateBody) {
        if let Some(delivery) = &self.agent {
            delivery.apply(body);
        }
        if let Some(line) = &self.line {
            line.apply(body);
        }
    }
}

impl DockerRuntime {
    pub(super) async fn create_new(&self, mut config: ContainerConfig) -> Result<String> {
        let (name, image) = config.name_and_image(self.default_image.as_deref())?;
        let engine = self.engine().await?;
        let egress = config.egress.take().filter(|e| e.spec.relayed());
        let extras = self
            .prepare(&engine, &mut config, &name, &image, egress.as_ref())
            .await?;
        self.make(&engine, &config, &name, &image, &extras).await?;
        if let Some(delivery) = &extras.agent {
            self.deliver_agent(&engine, &name, delivery, egress.is_some())
                .await?;
        }
        if let Err(err) = check_user(&engine, &name, config.user.as_deref()).await {
            self.discard(&engine, &name).await;
            return Err(err);
        }
        let binds = config.mounts.iter().filter(|m| m.kind == MountKind::Bind);
        self.mounts.remember(&[&name], binds.cloned().collect());
        if let Some(egress) = egress {
            let session = config
                .session_id
                .clone()
                .or(config.id.clone())
                .unwrap_or(name.clone());
            self.relayed.remember(&name, &session, egress);
        }
        Ok(name)
    }

    /// Everything before the engine is asked to create: the image, the agent's delivery,
    /// the relayed network, the line folder, bind sources, the network's existence.
    async fn prepare(
        &self,
        engine: &Engine,
        config: &mut ContainerConfig,
        name: &str,
        image: &str,
        egress: Option<&Egress>,
    ) -> Result<Extras> {
        let policy = config.pull.unwrap_or(self.pull);
        let wanted = ImageRequest {
            image,
            platform: config.platform.as_deref(),
            progress: &config.progress,
        };
        ensure_for_platform(engine, &wanted, policy).await?;
        let agent = match self.agent || egress.is_some() {
            true => {
                let platform = config.platform.as_deref();
                let upload = self.agent_upload;
                AgentDelivery::choose(engine, &self.base_dir, image, platform, upload).await?
            }
            false => Err(String::new()),
        };
        if let Some(egress) = egress {
            egress.compile()?;
            prepare_relayed(config, name, agent.as_ref().err().map(String::as_str))?;
            check_joined_holder(engine, config, name).await?;
        }
        let agent = agent.ok();
        let line = match &agent {
            Some(AgentDelivery::Mount(_)) => LineFolder::make(&self.base_dir, name),
            _ => None,
        };
        // A bind mount's source is a path on the engine's machine: only on this one can it be
        // made ahead of the engine.
        if engine.is_local() {
            for mount in config.mounts.iter().filter(|m| m.kind == MountKind::Bind) {
                ensure_mount_source(&mount.source, name).await?;
            }
        }
        if config.lifetime == Lifetime::Process {
            crate::runtime::note_process_container(&self.engine_options);
        }
        check_network(engine, config.network.as_deref()).await?;
        Ok(Extras { agent, line })
    }

    /// Creates the container: with our keep-alive (or the config's command), or, for an
    /// image without a shell, with the image's own default command.
    async fn make(
        &self,
        engine: &Engine,
        config: &ContainerConfig,
        name: &str,
        image: &str,
        extras: &Extras,
    ) -> Result<()> {
        let labels = labels_for_new_container(config, name, image, &self.base_dir);
        let entrypoint = match (&config.command, config.image_command) {
            (None, true) => config.image_entrypoint.clone(),
            (command, _) => Some(
                command
                    .clone()
                    .unwrap_or_else(|| sandbox_command_after(&config.startup_commands)),
            ),
        };
        let mut body = create_body(config, image, labels.clone(), entrypoint);
        if engine.info().kind == EngineKind::Podman {
            if let Some(host) = body.host_config.as_mut() {
                podman_nproc(host, host_pid_max());
            }
        }
        extras.apply(&mut body);
        let request = ImageRequest {
            image,
            platform: config.platform.as_deref(),
            progress: &config.progress,
        };
        let policy = config.pull.unwrap_or(self.pull);
        create_pulling(engine, name, &request, policy, body).await?;
        if config.command.is_some()
            || config.image_command
            || path_exists(engine, name, SHELL).await?
        {
            return Ok(());
        }
        // An image without a shell cannot run our keep-alive: its own default process
        // becomes the main process, if it has one.
        self.discard(engine, name).await;
        if !self.image_default_command(engine, image).await? {
            return Err(Error::invalid_argument(format!(
                "container '{name}': image '{image}' has no {SHELL} for a keep-alive and no default command; pass `command`"
            )));
        }
        let mut body = create_body(config, image, labels, None);
        extras.apply(&mut body);
        create_container(engine, name, &request, body).await
    }

    async fn image_default_command(&self, engine: &Engine, image: &str) -> Result<bool> {
        let subject = format!("image '{image}'");
        let inspected = engine
            .call(&subject, engine.docker().inspect_image(image))
            .await?;
        let config = inspected.config.unwrap_or_default();
        let non_empty = |v: &Option<Vec<String>>| v.as_ref().is_some_and(|v| !v.is_empty());
        Ok(non_empty(&config.entrypoint) || non_empty(&config.cmd))
    }

    /// Puts an uploaded agent into the created `name`. Without it the relay cannot run
    /// (`EGRESS_UNAVAILABLE`, the container removed); plain commands take the engine path.
    async fn deliver_agent(
        &self,
        engine: &Engine,
        name: &str,
        delivery: &AgentDelivery,
        relayed: bool,
    ) -> Result<()> {
        let Err(err) = delivery.deliver(engine, name).await else {
            return Ok(());
        };
        if relayed {
            self.discard(engine, name).await;
            let why = format!("the session agent could not be uploaded: {}", err.message);
            return Err(Error::new(ErrorCode::EgressUnavailable, why));
        }
        tracing::warn!("container '{name}': no session agent: {}", err.message);
        Ok(())
    }

    /// Removes a container we just created and cannot use; failures are moot.
    async fn discard(&self, engine: &Engine, name: &str) {
        let options = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        let _ = engine
            .call(name, engine.docker().remove_container(name, Some(options)))
            .await;
    }
}
