//! The namespace's deny-all NetworkPolicy for session Pods made with `network: 'none'`:
//! neither ingress nor egress, so that where the cluster's network plugin enforces policies
//! such a Pod reaches nothing but its own loopback.

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::{NetworkPolicy, NetworkPolicySpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::PostParams;
use kube::Api;

use super::api_errors::from_kube;
use super::cluster_client::Cluster;
use super::session_pod::NETWORK_LABEL;
use crate::error::Result;
use crate::runtime::labels::MANAGED;

pub const POLICY_NAME: &str = "container-isolation-deny-all";

/// Creates the policy unless it exists.
pub async fn ensure_deny_all(cluster: &Cluster) -> Result<()> {
    let policies: Api<NetworkPolicy> = Api::namespaced(cluster.client.clone(), &cluster.namespace);
    let policy = NetworkPolicy {
        metadata: ObjectMeta {
            name: Some(POLICY_NAME.to_string()),
            labels: Some(BTreeMap::from([(MANAGED.to_string(), "true".to_string())])),
            ..Default::default()
        },
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(LabelSelector {
                match_labels: Some(BTreeMap::from([
                    (MANAGED.to_string(), "true".to_string()),
                    (NETWORK_LABEL.to_string(), "none".to_string()),
                ])),
                match_expressions: None,
            }),
            policy_types: Some(vec!["Ingress".to_string(), "Egress".to_string()]),
            ingress: Some(Vec::new()),
            egress: Some(Vec::new()),
        }),
    };
    let subject = format!(
        "create NetworkPolicy '{POLICY_NAME}' in namespace '{}'",
        cluster.namespace
    );
    match policies.create(&PostParams::default(), &policy).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(()),
        Err(err) => Err(from_kube(err, &subject, "create networkpolicies")),
    }
}
