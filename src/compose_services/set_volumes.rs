//! The set's named volumes: made once, labelled as the session's (so `reapOrphans`, exit
//! hooks and the watchdog find them as they find a session's workspace volume) with the
//! holder as their container and their set.

use std::collections::BTreeMap;

use super::service_spec::ServiceSetSpec;
use super::set_names::{holder_name, volume_name};
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::labels::{self, container_labels, LabelContext};
use crate::runtime::OwnerIdentity;
use crate::workspace_volume::create_volume;

fn volume_labels(spec: &ServiceSetSpec, base_dir: &str) -> BTreeMap<String, String> {
    let holder = holder_name(&spec.container);
    let mut all = container_labels(
        &BTreeMap::new(),
        &LabelContext {
            session: &spec.session_id,
            image: &spec.holder_image,
            lifetime: spec.lifetime,
            base_dir,
            clone_path: spec.clone_path.as_deref().unwrap_or(""),
            project_dir: spec.project_dir.as_deref().unwrap_or(""),
            job: false,
            owner: OwnerIdentity::current(),
            created_at_ms: chrono::Utc::now().timestamp_millis(),
        },
    );
    all.insert(labels::CONTAINER.into(), holder.clone());
    all.insert(labels::SERVICE_SET.into(), holder);
    all
}

/// Makes each named volume the services mount, unless it exists; returns their names.
pub async fn make_volumes(
    engine: &Engine,
    spec: &ServiceSetSpec,
    base_dir: &str,
) -> Result<Vec<String>> {
    let labels = volume_labels(spec, base_dir);
    let mut names: Vec<String> = spec
        .services
        .iter()
        .flat_map(|s| s.volumes.iter())
        .map(|v| volume_name(&spec.container, &v.volume))
        .collect();
    names.sort();
    names.dedup();
    for name in &names {
        create_volume(engine, name, &labels).await?;
    }
    Ok(names)
}
