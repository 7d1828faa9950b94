//! Named volumes on the engine: made with labels (once), found by label, removed.

use std::collections::{BTreeMap, HashMap};

use bollard::models::VolumeCreateRequest;
use bollard::query_parameters::{ListVolumesOptionsBuilder, RemoveVolumeOptionsBuilder};

use crate::engine::Engine;
use crate::error::{ErrorCode, Result};

fn subject(name: &str) -> String {
    format!("volume '{name}'")
}

fn missing(code: ErrorCode) -> bool {
    matches!(code, ErrorCode::Enoent | ErrorCode::ContainerNotFound)
}

/// The volume holding a session's repository, named after its container.
pub fn volume_name(container: &str) -> String {
    format!("{container}-workspace")
}

/// Whether the volume `name` exists.
pub async fn volume_exists(engine: &Engine, name: &str) -> Result<bool> {
    Ok(volume_labels_of(engine, name).await?.is_some())
}

/// The labels of the volume `name`; `None` when there is no such volume.
pub async fn volume_labels_of(
    engine: &Engine,
    name: &str,
) -> Result<Option<HashMap<String, String>>> {
    match engine
        .call(&subject(name), engine.docker().inspect_volume(name))
        .await
    {
        Ok(volume) => Ok(Some(volume.labels)),
        Err(err) if missing(err.code) => Ok(None),
        Err(err) => Err(err),
    }
}

/// Makes the volume `name` with `labels` unless it exists; true when it was made now.
pub async fn create_volume(
    engine: &Engine,
    name: &str,
    labels: &BTreeMap<String, String>,
) -> Result<bool> {
    if volume_exists(engine, name).await? {
        return Ok(false);
    }
    let request = VolumeCreateRequest {
        name: Some(name.to_string()),
        labels: Some(labels.clone().into_iter().collect()),
        ..Default::default()
    };
    engine
        .call(&subject(name), engine.docker().create_volume(request))
        .await?;
    Ok(true)
}

/// Removes the volume `name`; one already gone is not an error.
pub async fn remove_volume(engine: &Engine, name: &str) -> Result<()> {
    let options = RemoveVolumeOptionsBuilder::default().force(true).build();
    match engine
        .call(
            &subject(name),
            engine.docker().remove_volume(name, Some(options)),
        )
        .await
    {
        Err(err) if !missing(err.code) => Err(err),
        _ => Ok(()),
    }
}

/// The volumes carrying every one of `labels` (`key=value`), with all their labels.
pub async fn labelled_volumes(
    engine: &Engine,
    labels: &[String],
) -> Result<Vec<(String, HashMap<String, String>)>> {
    let mut filters: HashMap<&str, Vec<String>> = HashMap::new();
    filters.insert("label", labels.to_vec());
    let options = ListVolumesOptionsBuilder::default()
        .filters(&filters)
        .build();
    let answer = engine
        .call(
            "list of managed volumes",
            engine.docker().list_volumes(Some(options)),
        )
        .await?;
    Ok(answer
        .volumes
        .unwrap_or_default()
        .into_iter()
        .filter(|v| has_every_label(&v.labels, labels))
        .map(|v| (v.name, v.labels))
        .collect())
}

/// Whether `found` has every filter of `wanted` (`key=value`, or `key` for any value).
/// Checked here, not left to the engine: Podman's Docker-compatible volume list (4.3) gives
/// the volumes that match *any* of several label filters, where Docker's gives those that
/// match all of them — a set's teardown would remove every managed volume it could.
fn has_every_label(found: &HashMap<String, String>, wanted: &[String]) -> bool {
    wanted.iter().all(|filter| match filter.split_once('=') {
        Some((key, value)) => found.get(key).is_some_and(|v| v == value),
        None => found.contains_key(filter.as_str()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_filter_must_match() {
        let found = HashMap::from([
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "x=y".to_string()),
        ]);
        let wanted =
            |filters: &[&str]| -> Vec<String> { filters.iter().map(|f| f.to_string()).collect() };
        assert!(has_every_label(&found, &wanted(&["a=1", "b=x=y"])));
        assert!(has_every_label(&found, &wanted(&["a", "b"])));
        assert!(has_every_label(&found, &[]));
        assert!(!has_every_label(&found, &wanted(&["a=1", "b=x"])));
        assert!(!has_every_label(&found, &wanted(&["a=1", "c"])));
        assert!(!has_every_label(&found, &wanted(&["a=2"])));
    }
}
