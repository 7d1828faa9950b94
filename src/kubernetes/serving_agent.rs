//! The session agent of a running Pod, for a caller's files or commands: the live
//! connection without asking the cluster, else the Pod read and its agent started, and
//! `UNSUPPORTED` with the reason where it cannot serve (a Pod has no engine, archive
//! endpoint or host path to fall back on).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;

use super::kubernetes_runtime::KubernetesRuntime;
use super::session_pod::CONTAINER;
use crate::agent::AgentConnection;
use crate::error::{Error, ErrorCode, Result};

/// The agent of `pod`: its live connection without asking the cluster, else as
/// `read_serving_agent` finds it. `what` names what is reached through it ("files",
/// "commands").
pub(super) async fn serving_agent(
    runtime: &KubernetesRuntime,
    pod: &str,
    what: &str,
) -> Result<Arc<AgentConnection>> {
    match runtime.live_agent(pod) {
        Some(agent) => Ok(agent),
        None => Ok(read_serving_agent(runtime, pod, what).await?.0),
    }
}

/// The Pod read (running, else why not), its agent started where it is not up, and its
/// container's working directory; `UNSUPPORTED` with the reason where the agent cannot
/// serve.
pub(super) async fn read_serving_agent(
    runtime: &KubernetesRuntime,
    pod: &str,
    what: &str,
) -> Result<(Arc<AgentConnection>, String)> {
    let (_, read, agent) = runtime.running_pod(pod).await?;
    let agent = agent.map_err(|why| {
        Error::new(
            ErrorCode::Unsupported,
            format!(
                "{what} of container '{pod}' are reached through the Pod's session agent, and {why}"
            ),
        )
    })?;
    Ok((agent, working_dir(&read)))
}

/// The session container's working directory (the image's, unless the Pod names one).
fn working_dir(pod: &Pod) -> String {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers.iter().find(|c| c.name == CONTAINER))
        .and_then(|c| c.working_dir.clone())
        .unwrap_or_else(|| "/".to_string())
}
