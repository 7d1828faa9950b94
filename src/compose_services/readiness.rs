//! Waiting for a dependency as `depends_on` asks: started (it was), healthy (dockerd's own
//! health status; on Podman, which records a healthcheck without running it, the check
//! exec'd by us), or completed with exit 0. Every wait ends by the set's deadline; a
//! dependency that is not ready fails with `SERVICE_NOT_READY` naming it. A condition met
//! once is not waited for again.

use std::collections::HashSet;
use std::time::Duration;

use bollard::models::{ContainerInspectResponse, HealthStatusEnum};
use tokio::time::Instant;

use super::health_probe::{probe, ProbeEnd};
use super::service_spec::{Condition, Dependency};
use super::set_names::service_container_name;
use crate::container_runtime::{ContainerRuntime, DockerRuntime, Healthcheck};
use crate::engine::{Engine, EngineKind};
use crate::error::{Error, ErrorCode, Result};
use crate::progress::{Phase, Progress};

/// How often dockerd's health status is read.
const POLL: Duration = Duration::from_millis(250);

pub struct Readiness<'a> {
    pub engine: &'a Engine,
    pub runtime: &'a DockerRuntime,
    /// The session container's name, which the services' are made from.
    pub container: &'a str,
    pub deadline: Instant,
    pub timeout: Duration,
    pub progress: &'a Progress,
    pub met: HashSet<(String, Condition)>,
}

fn not_ready(service: &str, who: &str, why: String) -> Error {
    Error::new(
        ErrorCode::ServiceNotReady,
        format!("service '{service}' is not ready for '{who}': {why}"),
    )
}

/// The exit code of a container that is not running; `None` while it runs.
fn exited(inspected: &ContainerInspectResponse) -> Option<i64> {
    let state = inspected.state.as_ref()?;
    match state.running {
        Some(true) => None,
        _ => Some(state.exit_code.unwrap_or(-1)),
    }
}

fn last_check(inspected: &ContainerInspectResponse) -> String {
    let log = inspected
        .state
        .as_ref()
        .and_then(|s| s.health.as_ref())
        .and_then(|h| h.log.as_ref())
        .and_then(|log| log.last());
    match log {
        Some(result) => format!(
            "last check: exit {}: {}",
            result.exit_code.unwrap_or(-1),
            result.output.as_deref().unwrap_or("").trim()
        ),
        None => "no check has run".into(),
    }
}

/// The healthcheck the container runs: its own (the service's, else its image's).
fn container_healthcheck(inspected: &ContainerInspectResponse) -> Option<Healthcheck> {
    let config = inspected.config.as_ref()?.healthcheck.as_ref()?;
    let duration = |n: Option<i64>| n.filter(|n| *n > 0).map(|n| Duration::from_nanos(n as u64));
    Some(Healthcheck {
        test: config.test.clone().filter(|t| !t.is_empty())?,
        interval: duration(config.interval),
        timeout: duration(config.timeout),
        retries: config
            .retries
            .and_then(|r| u32::try_from(r).ok())
            .filter(|r| *r > 0),
        start_period: duration(config.start_period),
    })
}

impl Readiness<'_> {
    fn out_of_time(&self, service: &str, who: &str, what: &str, detail: String) -> Error {
        not_ready(
            service,
            who,
            format!(
                "it did not {what} within the set's {} s ({detail})",
                self.timeout.as_secs_f64().ceil()
            ),
        )
    }

    /// Waits until `dep` is met for `who`.
    pub async fn wait(&mut self, dep: &Dependency, who: &str) -> Result<()> {
        let key = (dep.service.clone(), dep.condition);
        if dep.condition == Condition::Started || self.met.contains(&key) {
            return Ok(());
        }
        let container = service_container_name(self.container, &dep.service);
        let what = match dep.condition {
            Condition::Healthy => "to be healthy",
            _ => "to complete successfully",
        };
        self.progress.step(
            Phase::Create,
            &format!("waiting for service {} {what}", dep.service),
        );
        match dep.condition {
            Condition::Healthy => self.healthy(&dep.service, &container, who).await?,
            _ => self.completed(&dep.service, &container, who).await?,
        }
        self.met.insert(key);
        Ok(())
    }

    async fn inspect(&self, container: &str) -> Result<ContainerInspectResponse> {
        let subject = format!("container '{container}'");
        self.engine.inspect_container(container, &subject).await
    }

    async fn healthy(&self, service: &str, container: &str, who: &str) -> Result<()> {
        let inspected = self.inspect(container).await?;
        let Some(check) = container_healthcheck(&inspected).filter(|c| !c.disabled()) else {
            return Err(not_ready(
                service,
                who,
                "it must be healthy, and it has no healthcheck".into(),
            ));
        };
        if self.engine.info().kind == EngineKind::Podman {
            return self.probed(service, container, who, &check).await;
        }
        let mut inspected = inspected;
        loop {
            if let Some(code) = exited(&inspected) {
                let why = format!("it exited with code {code} before it was healthy");
                return Err(not_ready(service, who, why));
            }
            let health = inspected.state.as_ref().and_then(|s| s.health.as_ref());
            match health.and_then(|h| h.status) {
                Some(HealthStatusEnum::HEALTHY) => return Ok(()),
                Some(HealthStatusEnum::UNHEALTHY) => {
                    let why = format!("it is unhealthy ({})", last_check(&inspected));
                    return Err(not_ready(service, who, why));
                }
                _ => {}
            }
            if Instant::now() >= self.deadline {
                let detail = last_check(&inspected);
                return Err(self.out_of_time(service, who, "become healthy", detail));
            }
            tokio::time::sleep_until((Instant::now() + POLL).min(self.deadline)).await;
            inspected = self.inspect(container).await?;
        }
    }

    async fn probed(
        &self,
        service: &str,
        container: &str,
        who: &str,
        check: &Healthcheck,
    ) -> Result<()> {
        match probe(self.runtime, container, check, self.deadline).await? {
            ProbeEnd::Healthy => Ok(()),
            ProbeEnd::Unhealthy(last) => Err(not_ready(
                service,
                who,
                format!("it is unhealthy (last check: {last})"),
            )),
            ProbeEnd::OutOfTime(last) => Err(self.out_of_time(
                service,
                who,
                "become healthy",
                format!("last check: {last}"),
            )),
            ProbeEnd::Exited => {
                let code = exited(&self.inspect(container).await?).unwrap_or(-1);
                let why = format!("it exited with code {code} before it was healthy");
                Err(not_ready(service, who, why))
            }
        }
    }

    async fn completed(&self, service: &str, container: &str, who: &str) -> Result<()> {
        let remaining = self.deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(remaining, self.runtime.wait(container)).await {
            Ok(Ok(0)) => Ok(()),
            Ok(Ok(code)) => Err(not_ready(
                service,
                who,
                format!("it must complete successfully, and it exited with code {code}"),
            )),
            Ok(Err(err)) => Err(err),
            Err(_) => Err(self.out_of_time(service, who, "complete", "still running".into())),
        }
    }
}
