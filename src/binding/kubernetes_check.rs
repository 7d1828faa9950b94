//! What `KubernetesRuntime.check()` answers: the API server, the permissions the credentials
//! lack, the nodes and RuntimeClasses they may see, and the measured NetworkPolicy verdict.

use napi_derive::napi;

use crate::kubernetes::{ClusterReport, PolicyProbeRequest};

/// Options of `check()`.
#[napi(object)]
#[derive(Default)]
pub struct KubernetesCheckOptions {
    /// Measure whether the cluster enforces NetworkPolicy: two short-lived Pods try to reach
    /// the API server's Service, one under the deny-all policy. Default `false`.
    pub network_policy: Option<bool>,
    /// The probe Pods' image (it needs bash with `timeout`, or `nc`); default the runtime's.
    pub image: Option<String>,
}

/// A node of the cluster.
#[napi(object)]
pub struct KubernetesNode {
    /// The node's name.
    pub name: String,
    /// The kubelet's version.
    pub version: String,
    /// The container runtime the kubelet reports (`containerd://1.6.20`).
    pub runtime: String,
    /// Whether its `Ready` condition is `True`.
    pub ready: bool,
}

/// A RuntimeClass: the name Pods give as `runtimeClassName`, the handler it runs them with.
#[napi(object)]
pub struct KubernetesRuntimeClass {
    /// What a Pod gives as `runtimeClassName`.
    pub name: String,
    /// The container runtime handler it selects on the nodes (`runsc`, `kata`).
    pub handler: String,
}

/// Whether a deny-all NetworkPolicy holds on this cluster, as measured.
#[napi(object)]
pub struct NetworkPolicyCheck {
    /// `'unknown'` when a Pod beside the policy could not connect either.
    #[napi(ts_type = "'enforced' | 'not-enforced' | 'unknown'")]
    pub verdict: String,
    /// What was measured, in words.
    pub detail: String,
}

/// What `check()` found.
#[napi(object)]
pub struct KubernetesCheck {
    /// The API server's URL.
    pub server: String,
    /// Its `gitVersion` (e.g. `v1.34.4`).
    pub version: String,
    /// The namespace the runtime works in.
    pub namespace: String,
    /// `verb resource[/subresource]` the library uses and the credentials may not (empty: the
    /// Role in deploy/kubernetes/role.yaml, or more, is granted).
    pub missing: Vec<String>,
    /// The nodes; absent when the credentials may not list them (see `unseen`).
    pub nodes: Option<Vec<KubernetesNode>>,
    /// The RuntimeClasses; absent when the credentials may not list them.
    pub runtime_classes: Option<Vec<KubernetesRuntimeClass>>,
    /// What the credentials may not list (`list nodes`, `list runtimeclasses`): the library
    /// needs neither, a namespaced Role grants neither.
    pub unseen: Vec<String>,
    /// With `networkPolicy: true`.
    pub network_policy: Option<NetworkPolicyCheck>,
}

impl KubernetesCheckOptions {
    /// The core's request for a probe, when one is asked for.
    pub fn probe(self) -> Option<PolicyProbeRequest> {
        (self.network_policy == Some(true)).then_some(PolicyProbeRequest { image: self.image })
    }
}

impl From<ClusterReport> for KubernetesCheck {
    fn from(report: ClusterReport) -> Self {
        let ClusterReport {
            check,
            survey,
            network_policy,
        } = report;
        KubernetesCheck {
            server: check.server,
            version: check.version,
            namespace: check.namespace,
            missing: check.missing,
            nodes: survey.nodes.map(|nodes| {
                nodes
                    .into_iter()
                    .map(|n| KubernetesNode {
                        name: n.name,
                        version: n.version,
                        runtime: n.runtime,
                        ready: n.ready,
                    })
                    .collect()
            }),
            runtime_classes: survey.runtime_classes.map(|classes| {
                classes
                    .into_iter()
                    .map(|(name, handler)| KubernetesRuntimeClass { name, handler })
                    .collect()
            }),
            unseen: survey.unseen,
            network_policy: network_policy.map(|probe| NetworkPolicyCheck {
                verdict: probe.verdict.as_str().to_string(),
                detail: probe.detail,
            }),
        }
    }
}
