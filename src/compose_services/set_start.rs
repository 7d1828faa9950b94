//! Bringing a service set up: the holder made and started, the named volumes made, then
//! each service in the given (dependency) order, after what it depends on is ready; then
//! what the session container depends on. A set that fails to come up is removed whole
//! (no container or volume left), or, when it existed already (a restart), stopped.

use std::time::Duration;

use tokio::time::Instant;

use super::holder::{holder_config, Joining};
use super::pids_budget::{share_pids, PidsShares};
use super::readiness::Readiness;
use super::service_binds::verify_binds;
use super::service_config::service_config;
use super::service_spec::{ServiceSetSpec, ServiceSpec};
use super::set_names::{holder_name, service_container_name};
use super::set_teardown::{remove_service_set, stop_service_set};
use super::set_volumes::make_volumes;
use super::spec_checks::check_spec;
use crate::container_runtime::{ContainerConfig, ContainerRuntime, DockerRuntime};
use crate::engine::{ensure_image, Engine, ImageRequest};
use crate::error::{ErrorCode, Result};
use crate::progress::Phase;

/// A running set: what the session container needs to join it.
#[derive(Debug, Clone)]
pub struct ServiceSet {
    pub holder: String,
    pub joining: Joining,
    /// Each service's name and its container's, in start order.
    pub services: Vec<(String, String)>,
    pub volumes: Vec<String>,
    /// The session container's share of the pids budget.
    pub app_pids: Option<i64>,
}

impl ServiceSet {
    /// Makes `config` (the session container's) a member of the set running `app_service`:
    /// in the holder's network namespace, with its names, and its share of the pids.
    pub fn join(&self, config: &mut ContainerConfig, app_service: &str) {
        self.joining.apply(config, app_service);
        if self.app_pids.is_some() {
            config.resources.pids = self.app_pids;
        }
    }
}

async fn exists(engine: &Engine, name: &str) -> Result<bool> {
    match engine.inspect_container(name, name).await {
        Ok(_) => Ok(true),
        Err(err) if err.code == ErrorCode::ContainerNotFound => Ok(false),
        Err(err) => Err(err),
    }
}

/// The service's working directory, else its image's (present after this, as the runtime's
/// pull policy says), else `/`.
async fn working_dir(
    runtime: &DockerRuntime,
    engine: &Engine,
    spec: &ServiceSetSpec,
    service: &ServiceSpec,
) -> Result<String> {
    if let Some(dir) = &service.working_dir {
        return Ok(dir.clone());
    }
    let request = ImageRequest {
        image: &service.image,
        platform: None,
        progress: &spec.progress,
    };
    ensure_image(engine, &request, runtime.pull_policy()).await?;
    let subject = format!("image '{}'", service.image);
    let inspected = engine
        .call(&subject, engine.docker().inspect_image(&service.image))
        .await?;
    Ok(inspected
        .config
        .and_then(|c| c.working_dir)
        .filter(|d| d.starts_with('/'))
        .unwrap_or_else(|| "/".into()))
}

struct BringUp<'a> {
    runtime: &'a DockerRuntime,
    engine: &'a Engine,
    spec: &'a ServiceSetSpec,
    shares: PidsShares,
}

impl BringUp<'_> {
    async fn create(&self, config: ContainerConfig, service: &str) -> Result<()> {
        let name = config.name.as_deref().unwrap_or_default();
        let progress = &self.spec.progress;
        progress.step(
            Phase::Create,
            &format!("creating service {service} ({name})"),
        );
        self.runtime.create(config).await.map(|_| ())
    }

    async fn start(&self, name: &str, service: &str) -> Result<()> {
        let progress = &self.spec.progress;
        progress.step(Phase::Create, &format!("starting service {service}"));
        self.runtime.start(name).await
    }

    async fn run(&self, deadline: Instant) -> Result<ServiceSet> {
        let spec = self.spec;
        let holder = holder_name(&spec.container);
        if !exists(self.engine, &holder).await? {
            let config = holder_config(spec, self.shares.holder);
            self.create(config, "holder").await?;
        }
        self.start(&holder, "holder").await?;
        let joining = Joining::of(self.engine, &holder).await?;
        let base_dir = self.runtime.base_dir().to_string_lossy().into_owned();
        let volumes = make_volumes(self.engine, spec, &base_dir).await?;
        let mut readiness = Readiness {
            engine: self.engine,
            runtime: self.runtime,
            container: &spec.container,
            deadline,
            timeout: spec.ready_timeout,
            progress: &spec.progress,
            met: Default::default(),
        };
        let mut services = Vec::new();
        for service in &spec.services {
            for dep in &service.depends_on {
                readiness.wait(dep, &service.name).await?;
            }
            let name = service_container_name(&spec.container, &service.name);
            if !exists(self.engine, &name).await? {
                let dir = working_dir(self.runtime, self.engine, spec, service).await?;
                let mut config = service_config(spec, service, dir, self.shares.service);
                joining.apply(&mut config, &service.name);
                self.create(config, &service.name).await?;
            }
            self.start(&name, &service.name).await?;
            services.push((service.name.clone(), name));
        }
        for dep in &spec.app_depends_on {
            readiness.wait(dep, &spec.app_service).await?;
        }
        spec.progress.step(Phase::Create, "services ready");
        Ok(ServiceSet {
            holder,
            joining,
            services,
            volumes,
            app_pids: self.shares.app,
        })
    }
}

/// Brings the set `spec` describes up on `runtime`'s engine (its services get no session
/// agent) and returns it once every dependency of the services and of the session
/// container is ready, within `spec.ready_timeout`. A set that existed (stopped) is started
/// again as it was made. Bind sources are checked first, each time.
pub async fn start_service_set(
    runtime: &DockerRuntime,
    spec: &ServiceSetSpec,
) -> Result<ServiceSet> {
    check_spec(spec)?;
    verify_binds(spec)?;
    let shares = share_pids(spec.limits.pids, spec.services.len())?;
    let runtime = runtime.without_agent();
    let engine = runtime.engine().await?;
    let holder = holder_name(&spec.container);
    let fresh = !exists(&engine, &holder).await?;
    let deadline = Instant::now() + spec.ready_timeout;
    let bring_up = BringUp {
        runtime: &runtime,
        engine: &engine,
        spec,
        shares,
    };
    match bring_up.run(deadline).await {
        Ok(set) => Ok(set),
        Err(err) => {
            let undone = match fresh {
                true => remove_service_set(&engine, &holder).await.map(|_| ()),
                false => stop_service_set(&runtime, &holder, Some(Duration::from_secs(5))).await,
            };
            if let Err(also) = undone {
                tracing::warn!("service set '{holder}': not undone after a failed start: {also}");
            }
            Err(err)
        }
    }
}
