//! What `doctor` shows of a cluster beyond the namespace: its nodes (kubelet and container
//! runtime versions, readiness) and its RuntimeClasses (where gVisor or Kata would be
//! named). Both are cluster-scoped, which the library's namespaced Role does not grant: what
//! the credentials may not list is said as such, not as an error.

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::api::ListParams;
use kube::Api;

use super::api_errors::from_kube;
use super::cluster_client::Cluster;
use crate::error::{ErrorCode, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSummary {
    pub name: String,
    /// The kubelet's version.
    pub version: String,
    /// The container runtime the kubelet reports (`containerd://1.6.20`).
    pub runtime: String,
    /// Whether its `Ready` condition is `True`.
    pub ready: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterSurvey {
    /// `None` where the credentials may not list nodes.
    pub nodes: Option<Vec<NodeSummary>>,
    /// RuntimeClass names and their handlers (`gvisor` → `runsc`); `None` where the
    /// credentials may not list them.
    pub runtime_classes: Option<Vec<(String, String)>>,
    /// What could not be listed, as a Role names it (`list nodes`).
    pub unseen: Vec<String>,
}

pub async fn survey_cluster(cluster: &Cluster) -> Result<ClusterSurvey> {
    let mut survey = ClusterSurvey::default();
    let nodes: Api<Node> = Api::all(cluster.client.clone());
    match nodes.list(&ListParams::default()).await {
        Ok(list) => survey.nodes = Some(list.items.iter().map(summarize_node).collect()),
        Err(err) => seen_or_forbidden(
            from_kube(err, "the cluster's nodes", "list nodes"),
            "list nodes",
            &mut survey.unseen,
        )?,
    }
    let classes: Api<RuntimeClass> = Api::all(cluster.client.clone());
    match classes.list(&ListParams::default()).await {
        Ok(list) => {
            survey.runtime_classes = Some(
                list.items
                    .into_iter()
                    .map(|c| (c.metadata.name.unwrap_or_default(), c.handler))
                    .collect(),
            )
        }
        Err(err) => seen_or_forbidden(
            from_kube(err, "the cluster's RuntimeClasses", "list runtimeclasses"),
            "list runtimeclasses",
            &mut survey.unseen,
        )?,
    }
    Ok(survey)
}

/// A refusal for permissions is noted; any other failure is the caller's.
fn seen_or_forbidden(
    err: crate::error::Error,
    permission: &str,
    unseen: &mut Vec<String>,
) -> Result<()> {
    match err.code {
        ErrorCode::Forbidden => {
            unseen.push(permission.to_string());
            Ok(())
        }
        _ => Err(err),
    }
}

fn summarize_node(node: &Node) -> NodeSummary {
    let status = node.status.as_ref();
    let info = status.and_then(|s| s.node_info.as_ref());
    let ready = status
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
    NodeSummary {
        name: node.metadata.name.clone().unwrap_or_default(),
        version: info.map(|i| i.kubelet_version.clone()).unwrap_or_default(),
        runtime: info
            .map(|i| i.container_runtime_version.clone())
            .unwrap_or_default(),
        ready,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{NodeCondition, NodeStatus, NodeSystemInfo};

    #[test]
    fn a_node_is_ready_only_by_its_ready_condition() {
        let mut node = Node::default();
        node.metadata.name = Some("n1".into());
        node.status = Some(NodeStatus {
            conditions: Some(vec![
                NodeCondition {
                    type_: "MemoryPressure".into(),
                    status: "True".into(),
                    ..Default::default()
                },
                NodeCondition {
                    type_: "Ready".into(),
                    status: "False".into(),
                    ..Default::default()
                },
            ]),
            node_info: Some(NodeSystemInfo {
                kubelet_version: "v1.34.4".into(),
                container_runtime_version: "containerd://1.6.20".into(),
                ..Default::default()
            }),
            ..Default::default()
        });
        let summary = summarize_node(&node);
        assert!(!summary.ready);
        assert_eq!(summary.version, "v1.34.4");
        assert_eq!(summary.runtime, "containerd://1.6.20");
    }

    #[test]
    fn only_a_refusal_for_permissions_is_noted() {
        let mut unseen = Vec::new();
        let forbidden = crate::error::Error::new(ErrorCode::Forbidden, "no");
        assert!(seen_or_forbidden(forbidden, "list nodes", &mut unseen).is_ok());
        assert_eq!(unseen, ["list nodes"]);
        let down = crate::error::Error::new(ErrorCode::EngineUnavailable, "down");
        assert!(seen_or_forbidden(down, "list nodes", &mut unseen).is_err());
    }
}
