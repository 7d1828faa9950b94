//! Waiting on a Pod's progress by polling its status: until its session container runs
//! (or a reason shows it never will), until it exits, until it is gone.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::Api;

use super::api_errors::from_kube;
use super::pod_info::{info_from_pod, waiting_reason};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::ContainerState;

const POLL: Duration = Duration::from_millis(100);

/// Reasons a container waits that it will not get over by itself.
const STUCK: [&str; 7] = [
    "ErrImageNeverPull",
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
    "RunContainerError",
];

/// The Pod, read; 404 is `CONTAINER_NOT_FOUND`.
pub async fn read_pod(pods: &Api<Pod>, name: &str) -> Result<Pod> {
    pods.get(name)
        .await
        .map_err(|err| from_kube(err, &format!("container '{name}'"), "get pods"))
}

/// Until the session container has started (running or already exited); rejects with the
/// reason it cannot (`IMAGE_NOT_FOUND` for an image the node has not and may not pull).
pub async fn until_started(pods: &Api<Pod>, name: &str, limit: Duration) -> Result<Pod> {
    let deadline = Instant::now() + limit;
    loop {
        let pod = read_pod(pods, name).await?;
        if info_from_pod(&pod).state != ContainerState::Created {
            return Ok(pod);
        }
        if let Some((reason, message)) = waiting_reason(&pod) {
            if STUCK.contains(&reason.as_str()) {
                let code = if reason.contains("Image") {
                    ErrorCode::ImageNotFound
                } else {
                    ErrorCode::EngineError
                };
                return Err(Error::new(
                    code,
                    format!("container '{name}' cannot start: {reason}: {message}"),
                ));
            }
        }
        if Instant::now() >= deadline {
            let why = waiting_reason(&pod)
                .map(|(r, m)| format!(" ({r}: {m})"))
                .unwrap_or_default();
            return Err(Error::timeout(format!(
                "container '{name}' did not start within {} s{why}",
                limit.as_secs()
            )));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Until the session container has exited; its exit code.
pub async fn until_exited(pods: &Api<Pod>, name: &str) -> Result<i64> {
    loop {
        let info = info_from_pod(&read_pod(pods, name).await?);
        if let (ContainerState::Stopped | ContainerState::Failed, Some(code)) =
            (info.state, info.exit_code)
        {
            return Ok(code);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Until the Pod is gone, at most `limit`; whether it went.
pub async fn until_gone(pods: &Api<Pod>, name: &str, limit: Duration) -> Result<bool> {
    let deadline = Instant::now() + limit;
    loop {
        match read_pod(pods, name).await {
            Err(err) if err.code == ErrorCode::ContainerNotFound => return Ok(true),
            Err(err) => return Err(err),
            Ok(_) if Instant::now() >= deadline => return Ok(false),
            Ok(_) => tokio::time::sleep(POLL).await,
        }
    }
}
