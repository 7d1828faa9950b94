//! Making and starting a session's container from its stored settings: the image (built
//! when it is missing), every mount source checked again, the clone given to the remote
//! user, the lifecycle commands in order, and no container left behind when any of it
//! fails.

use std::path::Path;

use super::clone_owner::give_clone;
use super::lifecycle_runner::{run_on_host, InContainer, CREATE_STEPS};
use super::service_teardown::remove_services;
use super::workspace_record::WorkspaceRecord;
use super::workspace_storage::Storage;
use crate::container_runtime::{ContainerConfig, ContainerRuntime, DockerRuntime};
use crate::egress::Egress;
use crate::engine::{find_image, image_present, Engine, PullPolicy};
use crate::error::{Error, ErrorCode, Result};
use crate::progress::Phase;
use crate::runtime::exec::ExecRequest;
use crate::runtime::{run_buffered, EngineContainer};
use crate::runtime::{ContainerState, Lifetime};
use crate::session_images::{
    build_image, ensure_feature_image, ensure_uid_image, DerivedKind, ImageSupply,
};
use crate::session_settings::{
    process_env, substitute_container_env, ImageChoice, ProbeCache, RemoteEnv, SessionSettings,
};

pub struct SessionContainer<'a> {
    pub runtime: &'a DockerRuntime,
    pub engine: &'a Engine,
    pub record: &'a WorkspaceRecord,
    pub settings: &'a SessionSettings,
    pub probes: &'a ProbeCache,
    /// Relayed: the container is made without a network, its relay started with it.
    pub egress: Option<Egress>,
    /// The pull policy and progress of the call that makes the container.
    pub supply: ImageSupply,
}

/// `initializeCommand` (on the host, only when the settings hold it: the host allowed it),
/// then the image: pulled as the policy says, or built from the project (its bases pulled)
/// when it is a built one and `rebuild` is asked for or it is gone; its features installed
/// in a derived image, and the one derived with the remote user's ids if the session has
/// it. Returns the image with the features (the base itself without any), whose
/// `devcontainer.metadata` the session merges.
pub async fn prepare_image(
    engine: &Engine,
    project: &Path,
    settings: &SessionSettings,
    rebuild: bool,
    supply: &ImageSupply,
) -> Result<String> {
    if let Some(init) = &settings.lifecycle.initialize {
        run_on_host(project, init).await?;
    }
    let platform = settings.platform.as_deref();
    match &settings.image {
        ImageChoice::Built { tag, build } => {
            if rebuild || !image_present(engine, tag).await? {
                supply.ensure_bases(engine, build, platform).await?;
                let kind = (supply, DerivedKind::Build);
                build_image(engine, build, tag, platform, kind).await?;
            }
        }
        ImageChoice::Named { name } => supply.ensure(engine, name, platform).await?,
    }
    let name = settings.image.name();
    let image = ensure_feature_image(engine, name, settings, project, supply).await?;
    if let Some(derived) = &settings.uid_image {
        ensure_uid_image(derived, engine, &image, supply).await?;
    }
    Ok(image)
}

/// The uid and gid of `id`'s first line (`uid=N(name) gid=N(name) …`), validated.
fn parse_ids(out: &[u8]) -> Option<(u32, u32)> {
    let number = |field: &str| -> Option<u32> {
        let digits = field.split('(').next()?;
        (!digits.is_empty() && digits.len() <= 10 && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    };
    let line = std::str::from_utf8(out).ok()?.lines().next()?;
    let mut fields = line.split(' ');
    let uid = number(fields.next()?.strip_prefix("uid=")?)?;
    let gid = number(fields.next()?.strip_prefix("gid=")?)?;
    Some((uid, gid))
}

impl SessionContainer<'_> {
    fn clone_path(&self) -> &Path {
        Path::new(&self.record.clone_path)
    }

    fn runner<'e>(&'e self, env: &'e RemoteEnv) -> InContainer<'e, EngineContainer<'e>> {
        InContainer {
            target: EngineContainer {
                engine: self.engine,
                id: &self.record.container_id,
            },
            user: self.settings.remote_user(),
            cwd: &self.settings.workspace_folder,
            env,
            progress: &self.supply.progress,
        }
    }

    /// The image was prepared (pulled, built) before: the create pulls only a named image
    /// the engine has for another platform, as `docker run` would, unless pulls are off.
    fn create_pull(&self) -> PullPolicy {
        let named = matches!(self.settings.image, ImageChoice::Named { .. })
            && self.settings.featured_image() == self.settings.image.name()
            && self.settings.uid_image.is_none();
        if named && self.supply.pull != PullPolicy::Never {
            PullPolicy::Missing
        } else {
            PullPolicy::Never
        }
    }

    /// The environment commands run with now.
    async fn session_env(&self) -> Result<RemoteEnv> {
        self.probes
            .session_env(self.engine, &self.record.container_id, self.settings)
            .await
    }

    /// The engine-level config of the session's container, its mounts checked first.
    pub(super) async fn engine_config(&self, lifetime: Lifetime) -> Result<ContainerConfig> {
        let record = self.record;
        self.settings.verify_mounts(self.clone_path())?;
        let mut config = self.settings.container_config();
        if config
            .environment
            .values()
            .any(|v| v.contains("${containerEnv:"))
        {
            // `containerEnv` refers to the image's environment: the container has none yet.
            let image = find_image(self.engine, self.settings.featured_image()).await?;
            let env = process_env(image.and_then(|i| i.config).and_then(|c| c.env));
            for value in config.environment.values_mut() {
                *value = substitute_container_env(value, &env);
            }
        }
        config.name = Some(record.container_id.clone());
        config.lifetime = lifetime;
        config.session_id = Some(record.session_id.clone());
        config.clone_path = Some(record.clone_path.clone());
        config.project_dir = Some(record.project_dir.clone());
        if let Some(egress) = self.egress.clone().filter(|e| e.spec.relayed()) {
            config.network = None;
            config.egress = Some(egress);
        }
        config.pull = Some(self.create_pull());
        if let Some(image) = &record.checkpoint_image {
            config.image = Some(image.clone());
            config.pull = Some(PullPolicy::Never);
        }
        config.progress = self.supply.progress.clone();
        Ok(config)
    }

    /// Creates, starts and initialises the container from a prepared image.
    pub async fn create(&self, lifetime: Lifetime) -> Result<()> {
        let record = self.record;
        let mut config = self.engine_config(lifetime).await?;
        let services = self.start_services_for(&mut config, lifetime).await?;
        let undo_services = || async {
            if services.is_some() {
                let _ = remove_services(self.engine, record).await;
            }
        };
        let fresh_volume = match self.use_volume(&mut config, lifetime).await {
            Ok(fresh) => fresh,
            Err(err) => {
                undo_services().await;
                return Err(err);
            }
        };
        let progress = &self.supply.progress;
        progress.step(
            Phase::Create,
            &format!("creating container {}", record.container_id),
        );
        match self.runtime.create(config).await {
            Ok(_) => {}
            // Another process made it first: use that one.
            Err(err) if err.code == ErrorCode::Eexist => return Ok(()),
            Err(err) => {
                if fresh_volume {
                    self.discard_volume().await;
                }
                undo_services().await;
                return Err(err);
            }
        }
        let initialised = async {
            if fresh_volume {
                progress.step(Phase::Create, "copying the repository into the volume");
                self.fill_volume().await?;
            }
            progress.step(
                Phase::Create,
                &format!("starting container {}", record.container_id),
            );
            self.runtime.start(&record.container_id).await?;
            self.initialise().await?;
            progress.step(
                Phase::Create,
                &format!("container {} ready", record.container_id),
            );
            Ok(())
        }
        .await;
        if let Err(err) = initialised {
            // Leave no container behind; the clone (the session's work) stays.
            let _ = self.runtime.remove(&record.container_id).await;
            if fresh_volume {
                self.discard_volume().await;
            }
            undo_services().await;
            return Err(err);
        }
        Ok(())
    }

    /// The clone given to the remote user, then the lifecycle commands of a new container,
    /// in order.
    pub(super) async fn initialise(&self) -> Result<()> {
        self.give_clone_to_remote_user().await?;
        let env = self.session_env().await?;
        let runner = self.runner(&env);
        // A checkpoint's image holds what the creation steps did: a start's step only.
        let from_checkpoint = self.record.checkpoint_image.is_some();
        for step in CREATE_STEPS {
            if !from_checkpoint || step == "postStartCommand" {
                runner.run(step, &self.settings.commands_of(step)).await?;
            }
        }
        Ok(())
    }

    /// The remote user's uid and gid, from one `id` run as that user.
    async fn remote_ids(&self) -> Result<(u32, u32)> {
        let request = ExecRequest {
            command: vec!["id".into()],
            user: self.settings.remote_user().map(str::to_string),
            timeout: Some(std::time::Duration::from_secs(10)),
            output_limit: Some(512),
            ..Default::default()
        };
        let out = run_buffered(self.engine, &self.record.container_id, request).await?;
        parse_ids(&out.stdout)
            .filter(|_| out.exit_code == 0)
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::Devcontainer,
                    format!(
                        "remoteUser of container '{}': `id` gave no uid and gid (exit {})",
                        self.record.container_id, out.exit_code
                    ),
                )
            })
    }

    /// With `updateRemoteUserUID` (default) and a host running as root, whose uid the
    /// reference leaves alone: the session clone, which this library made, goes to the
    /// remote user's uid:gid so that user can write it. The project is never touched.
    pub(super) async fn give_clone_to_remote_user(&self) -> Result<()> {
        if !self.settings.behaviour.update_remote_user_uid()
            || self.settings.remote_user().is_none()
            || self.record.storage == Storage::Volume
            // SAFETY: geteuid has no preconditions.
            || unsafe { libc::geteuid() } != 0
        {
            return Ok(());
        }
        let (uid, gid) = self.remote_ids().await?;
        if uid == 0 {
            return Ok(());
        }
        let clone = self.clone_path().to_path_buf();
        tokio::task::spawn_blocking(move || give_clone(&clone, uid, gid))
            .await
            .map_err(|e| {
                Error::new(
                    ErrorCode::EngineError,
                    format!("background task failed: {e}"),
                )
            })?
            .map_err(|e| {
                Error::new(
                    ErrorCode::Eacces,
                    format!("giving the session clone to uid {uid}: {e}"),
                )
            })?;
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
        self.restart_services().await?;
        self.runtime.start(id).await?;
        let env = self.session_env().await?;
        self.runner(&env)
            .run(
                "postStartCommand",
                &self.settings.commands_of("postStartCommand"),
            )
            .await
    }

    /// `postAttachCommand`, run each time the session is handed out; the environment
    /// commands run with.
    pub async fn attach(&self) -> Result<RemoteEnv> {
        let env = self.session_env().await?;
        self.runner(&env)
            .run(
                "postAttachCommand",
                &self.settings.commands_of("postAttachCommand"),
            )
            .await?;
        Ok(env)
    }
}

#[cfg(test)]
mod tests {
    use super::parse_ids;

    #[test]
    fn ids_come_from_the_first_line_of_id() {
        let gnu = b"uid=1000(agent) gid=1001(staff) groups=1001(staff),27(sudo)\n";
        assert_eq!(parse_ids(gnu), Some((1000, 1001)));
        assert_eq!(parse_ids(b"uid=0(root) gid=0(root)\n"), Some((0, 0)));
        for bad in [
            &b"uid=x(a) gid=1(b)"[..],
            b"gid=1(b) uid=1(a)",
            b"",
            b"uid=99999999999(a) gid=1(b)",
        ] {
            assert_eq!(parse_ids(bad), None);
        }
    }
}
