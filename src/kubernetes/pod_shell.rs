//! Magenta's `Shell` (and its terminals) on a session Pod: the one shell of the library,
//! its commands run by the Pod's session agent (there is no engine exec to fall back on;
//! where the agent cannot serve, each command rejects `UNSUPPORTED` with the reason).

use std::sync::Arc;

use super::kubernetes_runtime::KubernetesRuntime;
use super::serving_agent::serving_agent;
use crate::shell::{AgentFuture, AgentSource};

/// A Pod's agent, as a shell asks for it.
#[derive(Clone)]
pub struct PodAgentSource {
    runtime: Arc<KubernetesRuntime>,
    pod: String,
}

impl PodAgentSource {
    pub fn new(runtime: Arc<KubernetesRuntime>, pod: &str) -> PodAgentSource {
        PodAgentSource {
            runtime,
            pod: pod.to_string(),
        }
    }
}

impl std::fmt::Debug for PodAgentSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PodAgentSource({})", self.pod)
    }
}

impl AgentSource for PodAgentSource {
    fn connection(&self) -> AgentFuture<'_> {
        Box::pin(serving_agent(&self.runtime, &self.pod, "commands"))
    }
}
