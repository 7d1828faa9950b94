//! The labels a container gets when this process creates it from a `ContainerConfig`.

use std::collections::BTreeMap;
use std::path::Path;

use super::container_config::ContainerConfig;
use crate::runtime::labels::{container_labels, LabelContext, POOL, SERVICE, SERVICE_SET};
use crate::runtime::OwnerIdentity;

/// The labels of a container about to be created from `config`, named `name`, from
/// `image`, by this process under `base_dir`.
pub fn labels_for_new_container(
    config: &ContainerConfig,
    name: &str,
    image: &str,
    base_dir: &Path,
) -> BTreeMap<String, String> {
    let session = config
        .session_id
        .as_deref()
        .or(config.id.as_deref())
        .unwrap_or(name);
    let mut all = container_labels(
        &config.labels,
        &LabelContext {
            session,
            image,
            lifetime: config.lifetime,
            base_dir: &base_dir.to_string_lossy(),
            clone_path: config.clone_path.as_deref().unwrap_or(""),
            project_dir: config.project_dir.as_deref().unwrap_or(""),
            job: config.command.is_some(),
            owner: OwnerIdentity::current(),
            created_at_ms: chrono::Utc::now().timestamp_millis(),
        },
    );
    if let Some(key) = &config.pool {
        all.insert(POOL.to_string(), key.clone());
    }
    if let Some(member) = &config.service_set {
        all.insert(SERVICE_SET.to_string(), member.holder.clone());
        if let Some(service) = &member.service {
            all.insert(SERVICE.to_string(), service.clone());
        }
    }
    all
}
