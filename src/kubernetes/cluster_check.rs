//! What a host asks before it relies on a cluster: which API server and version answer, in
//! which namespace, and which of the permissions the library uses the credentials lack,
//! each asked of the API server itself (SelfSubjectAccessReview, which every authenticated
//! identity may make), so that a missing one is named before a session needs it.

use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use kube::api::PostParams;
use kube::Api;

use super::api_errors::from_kube;
use super::cluster_client::Cluster;
use crate::error::Result;

/// The verbs on resources the library uses in its namespace (deploy/kubernetes/role.yaml):
/// `(group, resource, subresource, verb)`.
const NEEDED: [(&str, &str, &str, &str); 14] = [
    ("", "pods", "", "get"),
    ("", "pods", "", "list"),
    ("", "pods", "", "create"),
    ("", "pods", "", "delete"),
    ("", "pods", "exec", "create"),
    ("", "pods", "log", "get"),
    ("", "pods", "portforward", "create"),
    ("coordination.k8s.io", "leases", "", "get"),
    ("coordination.k8s.io", "leases", "", "list"),
    ("coordination.k8s.io", "leases", "", "create"),
    ("coordination.k8s.io", "leases", "", "patch"),
    ("coordination.k8s.io", "leases", "", "delete"),
    ("networking.k8s.io", "networkpolicies", "", "create"),
    ("networking.k8s.io", "networkpolicies", "", "get"),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterCheck {
    pub server: String,
    /// The API server's `gitVersion`.
    pub version: String,
    pub namespace: String,
    /// `verb resource[/subresource]` the credentials may not, in the namespace.
    pub missing: Vec<String>,
}

pub async fn check_cluster(cluster: &Cluster) -> Result<ClusterCheck> {
    let version = cluster
        .client
        .apiserver_version()
        .await
        .map_err(|err| from_kube(err, "the API server's version", "get /version"))?;
    let reviews: Api<SelfSubjectAccessReview> = Api::all(cluster.client.clone());
    let mut missing = Vec::new();
    for (group, resource, subresource, verb) in NEEDED {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    namespace: Some(cluster.namespace.clone()),
                    group: Some(group.to_string()),
                    resource: Some(resource.to_string()),
                    subresource: (!subresource.is_empty()).then(|| subresource.to_string()),
                    verb: Some(verb.to_string()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = reviews
            .create(&PostParams::default(), &review)
            .await
            .map_err(|err| {
                from_kube(
                    err,
                    "a permission review",
                    "create selfsubjectaccessreviews",
                )
            })?;
        if !answer.status.is_some_and(|s| s.allowed) {
            missing.push(permission_name(resource, subresource, verb));
        }
    }
    Ok(ClusterCheck {
        server: cluster.server.clone(),
        version: version.git_version,
        namespace: cluster.namespace.clone(),
        missing,
    })
}

fn permission_name(resource: &str, subresource: &str, verb: &str) -> String {
    if subresource.is_empty() {
        format!("{verb} {resource}")
    } else {
        format!("{verb} {resource}/{subresource}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permissions_are_named_as_errors_name_them() {
        assert_eq!(
            permission_name("pods", "exec", "create"),
            "create pods/exec"
        );
        assert_eq!(permission_name("leases", "", "patch"), "patch leases");
    }
}
