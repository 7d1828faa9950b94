//! A Pod made again from its own spec: `start` of a stopped session (Kubernetes restarts no
//! Pod that ended, so the old one is deleted and this one submitted under its name).

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// `pod` as it was asked for, to be submitted again: its name, labels, annotations, owners
/// and spec, unplaced (Kubernetes restarts no Pod that ended).
pub fn made_again(pod: &Pod) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: pod.metadata.name.clone(),
            namespace: pod.metadata.namespace.clone(),
            labels: pod.metadata.labels.clone(),
            annotations: pod.metadata.annotations.clone(),
            owner_references: pod.metadata.owner_references.clone(),
            ..Default::default()
        },
        spec: pod.spec.clone().map(|mut spec| {
            spec.node_name = None;
            spec
        }),
        status: None,
    }
}
