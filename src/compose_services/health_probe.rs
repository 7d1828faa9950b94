//! A service's healthcheck run by us, for an engine that records a healthcheck but does not
//! run it (Podman without systemd's timers: its status stays `starting`): the test exec'd
//! in the container as the engine would run it, at its interval, each run bounded by its
//! timeout; failures within the start period do not count, `retries` failures in a row
//! make the service unhealthy.

use std::time::Duration;

use tokio::time::Instant;

use crate::container_runtime::{ContainerRuntime, DockerRuntime, Healthcheck};
use crate::error::{ErrorCode, Result};
use crate::runtime::exec::ExecRequest;

/// How much of a check's output is kept for the error message.
const KEPT_OUTPUT: usize = 2048;

/// How a probe ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeEnd {
    Healthy,
    /// `retries` checks failed in a row; the last one's exit and output.
    Unhealthy(String),
    /// The container is not running any more.
    Exited,
    /// The deadline came first; the last check's exit and output.
    OutOfTime(String),
}

async fn check_once(
    runtime: &DockerRuntime,
    container: &str,
    command: &[String],
    limit: Duration,
) -> Result<std::result::Result<(), String>> {
    let request = ExecRequest {
        command: command.to_vec(),
        timeout: Some(limit),
        output_limit: Some(KEPT_OUTPUT),
        ..Default::default()
    };
    match runtime.exec(container, request).await {
        Ok(outcome) if outcome.exit_code == 0 => Ok(Ok(())),
        Ok(outcome) => {
            let output = String::from_utf8_lossy(&outcome.stdout).into_owned()
                + &String::from_utf8_lossy(&outcome.stderr);
            Ok(Err(format!(
                "exit {}: {}",
                outcome.exit_code,
                output.trim()
            )))
        }
        Err(err) if err.code == ErrorCode::Timeout => Ok(Err(format!(
            "ran past its timeout of {} ms",
            limit.as_millis()
        ))),
        Err(err) => Err(err),
    }
}

/// Runs `check` in `container` until it passes, fails `retries` times in a row after the
/// start period, the container stops, or `deadline`.
pub async fn probe(
    runtime: &DockerRuntime,
    container: &str,
    check: &Healthcheck,
    deadline: Instant,
) -> Result<ProbeEnd> {
    let Some(command) = check.command() else {
        return Ok(ProbeEnd::Unhealthy("its healthcheck is NONE".into()));
    };
    let started = Instant::now();
    let mut failures = 0;
    let mut last = String::from("no check ran yet");
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Ok(ProbeEnd::OutOfTime(last));
        }
        let limit = check.timeout().min(deadline - now);
        match check_once(runtime, container, &command, limit).await {
            Ok(Ok(())) => return Ok(ProbeEnd::Healthy),
            Ok(Err(failed)) => last = failed,
            Err(err) if err.code == ErrorCode::ContainerNotRunning => return Ok(ProbeEnd::Exited),
            Err(err) => return Err(err),
        }
        if started.elapsed() >= check.start_period() {
            failures += 1;
            if failures >= check.retries() {
                return Ok(ProbeEnd::Unhealthy(last));
            }
        }
        tokio::time::sleep_until((Instant::now() + check.interval()).min(deadline)).await;
    }
}
