//! Everything a host (and `doctor`) may ask of a cluster at once: the check of the API server
//! and the credentials, the survey of nodes and RuntimeClasses, and, when asked for, the
//! measured NetworkPolicy verdict.

use super::cluster_check::ClusterCheck;
use super::cluster_survey::ClusterSurvey;
use super::kubernetes_runtime::KubernetesRuntime;
use super::policy_probe::{probe_network_policy, PolicyProbe};
use crate::error::Result;

#[derive(Debug, Clone)]
pub struct ClusterReport {
    pub check: ClusterCheck,
    pub survey: ClusterSurvey,
    pub network_policy: Option<PolicyProbe>,
}

/// What the probe of the NetworkPolicy needs, when one is asked for.
#[derive(Debug, Clone, Default)]
pub struct PolicyProbeRequest {
    /// The probe Pods' image; the runtime's default when `None`.
    pub image: Option<String>,
}

pub async fn report_cluster(
    runtime: &KubernetesRuntime,
    probe: Option<PolicyProbeRequest>,
) -> Result<ClusterReport> {
    let check = runtime.check().await?;
    let survey = runtime.survey().await?;
    let network_policy = match probe {
        Some(request) => Some(probe_network_policy(runtime, request.image).await?),
        None => None,
    };
    Ok(ClusterReport {
        check,
        survey,
        network_policy,
    })
}
