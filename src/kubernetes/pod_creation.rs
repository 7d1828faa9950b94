//! Making a Pod: its labels and owner (the host Lease for `'process'` lifetimes), the
//! session Pod's spec with a Compose config's services beside it, submitted and waited for;
//! and a warm pool member made a session's by relabelling it (a Pod's name cannot change,
//! its labels and owners can).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::Api;

use super::api_errors::from_kube;
use super::kubernetes_runtime::KubernetesRuntime;
use super::network_policy::ensure_deny_all;
use super::pod_labels::split_labels;
use super::pod_services::add_services;
use super::pod_wait::until_started;
use super::session_pod::{session_pod, PodPlacement};
use crate::compose_services::StoredServices;
use crate::container_runtime::ContainerConfig;
use crate::error::{Error, Result};
use crate::runtime::labels::{container_labels, LabelContext};
use crate::runtime::{container_name, OwnerIdentity};

/// How long `create` and `start` wait for the Pod's container to start (scheduling, the
/// node's image, the sandbox).
pub(super) const START_LIMIT: Duration = Duration::from_secs(120);

impl KubernetesRuntime {
    /// The Pod's image and labels (ours and the config's).
    fn image_and_labels(
        &self,
        config: &ContainerConfig,
        name: &str,
    ) -> Result<(String, BTreeMap<String, String>)> {
        let image = config
            .image
            .clone()
            .filter(|i| !i.is_empty())
            .or_else(|| self.default_image.clone())
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "container '{name}': no image (the config's, or the runtime's)"
                ))
            })?;
        let base_dir = self.base_dir.to_string_lossy();
        let session = config
            .session_id
            .clone()
            .or_else(|| config.id.clone())
            .unwrap_or_else(|| name.to_string());
        let labels = container_labels(
            &config.labels,
            &LabelContext {
                session: &session,
                image: &image,
                lifetime: config.lifetime,
                base_dir: &base_dir,
                clone_path: config.clone_path.as_deref().unwrap_or(""),
                project_dir: config.project_dir.as_deref().unwrap_or(""),
                job: config.command.is_some(),
                owner: OwnerIdentity::current(),
                created_at_ms: chrono::Utc::now().timestamp_millis(),
            },
        );
        Ok((image, labels))
    }

    async fn make_pod(
        &self,
        config: &ContainerConfig,
        name: &str,
        services: Option<&StoredServices>,
    ) -> Result<Pod> {
        let (image, labels) = self.image_and_labels(config, name)?;
        let cluster = self.cluster().await?;
        let owner = self.placement_owner(config.lifetime).await?;
        let placement = PodPlacement {
            namespace: &cluster.namespace,
            runtime_class: self.options.runtime_class.as_deref(),
            owner,
            pull: self.pull,
        };
        let mut pod = session_pod(config, name, &image, &labels, &placement)?;
        if let Some(services) = services {
            add_services(&mut pod, services, config, config.pull.unwrap_or(self.pull))?;
        }
        Ok(pod)
    }

    /// `create`, with a Compose devcontainer's other services as containers of the Pod,
    /// started before the session's in their dependency order.
    pub async fn create_with_services(
        &self,
        config: ContainerConfig,
        services: Option<&StoredServices>,
    ) -> Result<String> {
        config.validate()?;
        let name = container_name(config.name.as_deref(), config.id.as_deref())?;
        let pod = self.make_pod(&config, &name, services).await?;
        if config.network.as_deref() == Some("none") {
            let cluster = self.cluster().await?;
            self.deny_all
                .get_or_try_init(|| ensure_deny_all(cluster))
                .await?;
        }
        self.submit(&self.pods().await?, &pod, &name).await?;
        Ok(name)
    }

    /// Makes the Pod and waits for its container to start; a Pod that cannot start is
    /// removed and the reason rejected.
    pub(super) async fn submit(&self, pods: &Api<Pod>, pod: &Pod, name: &str) -> Result<()> {
        let subject = format!("create Pod '{name}'");
        pods.create(&PostParams::default(), pod)
            .await
            .map_err(|err| from_kube(err, &subject, "create pods"))?;
        self.remember(name);
        if let Err(err) = until_started(pods, name, START_LIMIT).await {
            let _ = pods
                .delete(name, &DeleteParams::default().grace_period(0))
                .await;
            return Err(err);
        }
        Ok(())
    }

    /// Makes the running Pod `name` (a warm pool member, made from the same spec with the
    /// `pool_label`) the one `config` describes: its labels and annotations replaced (the
    /// same keys, the pool's removed) and its owner set (the host Lease for a `'process'`
    /// lifetime, none otherwise), in one merge patch.
    pub async fn claim_pod(
        &self,
        name: &str,
        config: &ContainerConfig,
        pool_label: &str,
    ) -> Result<()> {
        let (_, labels) = self.image_and_labels(config, name)?;
        let (labels, annotations) = split_labels(&labels);
        let owner = self.placement_owner(config.lifetime).await?;
        // Every key of ours is an annotation; the label of those whose value is no label
        // value is removed, as is the pool's.
        let null = serde_json::Value::Null;
        let mut label_patch: serde_json::Map<String, serde_json::Value> = annotations
            .keys()
            .chain([&pool_label.to_string()])
            .map(|k| (k.clone(), null.clone()))
            .collect();
        label_patch.extend(labels.into_iter().map(|(k, v)| (k, v.into())));
        let mut annotations: serde_json::Map<String, serde_json::Value> = annotations
            .into_iter()
            .map(|(k, v)| (k, v.into()))
            .collect();
        annotations.insert(pool_label.to_string(), null);
        let patch = serde_json::json!({
            "metadata": {
                "labels": label_patch,
                "annotations": annotations,
                "ownerReferences": owner.map(|o| vec![o]),
            }
        });
        let subject = format!("claim Pod '{name}'");
        let pods = self.pods().await?;
        pods.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|err| from_kube(err, &subject, "patch pods"))?;
        Ok(())
    }
}
