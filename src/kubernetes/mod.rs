//! Sessions on a Kubernetes cluster: each container a Pod, reached through the API server
//! (kube-rs), with the boundary the engines give (docs/kubernetes.md).

mod api_errors;
mod cluster_check;
mod cluster_client;
mod cluster_report;
mod cluster_survey;
mod host_lease;
mod kubernetes_runtime;
mod network_policy;
mod pod_again;
mod pod_agent;
mod pod_creation;
mod pod_environment;
mod pod_exec;
mod pod_files;
mod pod_info;
mod pod_labels;
mod pod_logs;
mod pod_relay;
mod pod_services;
mod pod_shell;
mod pod_wait;
mod policy_probe;
mod serving_agent;
mod session_pod;

pub use cluster_check::ClusterCheck;
pub use cluster_client::KubernetesOptions;
pub use cluster_report::{report_cluster, ClusterReport, PolicyProbeRequest};
pub use cluster_survey::{ClusterSurvey, NodeSummary};
pub use kubernetes_runtime::{KubernetesRuntime, KubernetesRuntimeOptions};
pub use pod_environment::{pod_environment, pod_user, PodEnvironment, PodEnvironmentRequest};
pub use pod_files::{PodFileStat, PodFiles};
pub use pod_shell::PodAgentSource;
pub use policy_probe::{PolicyProbe, PolicyVerdict};
