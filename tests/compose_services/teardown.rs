//! A set's teardown removes its own volumes and nothing else: another set's volume and a
//! session's workspace volume, labelled as ours and as another set's, stay (Podman's volume
//! list answers any of several label filters, not all).

use std::collections::BTreeMap;

use container_isolation::compose_services::remove_service_set;
use container_isolation::runtime::labels;
use container_isolation::workspace_volume::{create_volume, remove_volume, volume_exists};

use crate::support::*;

async fn teardown_leaves_other_volumes(socket: &str, tag: &str) {
    let engine = runtime(socket, tag).engine().await.unwrap();
    let ours = format!("cr-teardown-{tag}-svc");
    let other = format!("cr-teardown-{tag}-other");
    let managed = |set: &str| {
        BTreeMap::from([
            (labels::MANAGED.to_string(), "true".to_string()),
            (labels::SERVICE_SET.to_string(), set.to_string()),
        ])
    };
    let (own_volume, other_volume) = (format!("{ours}-data"), format!("{other}-data"));
    for volume in [&own_volume, &other_volume] {
        let _ = remove_volume(&engine, volume).await;
    }
    create_volume(&engine, &own_volume, &managed(&ours))
        .await
        .unwrap();
    create_volume(&engine, &other_volume, &managed(&other))
        .await
        .unwrap();
    let removed = remove_service_set(&engine, &ours).await.unwrap();
    let still = volume_exists(&engine, &other_volume).await.unwrap();
    let _ = remove_volume(&engine, &other_volume).await;
    assert_eq!(removed, std::slice::from_ref(&own_volume));
    assert!(
        still,
        "{tag}: another set's volume was removed with this set"
    );
    assert!(!volume_exists(&engine, &own_volume).await.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn teardown_on_dockerd() {
    teardown_leaves_other_volumes(DOCKER, "docker-teardown").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn teardown_on_podman() {
    if available(PODMAN) {
        teardown_leaves_other_volumes(PODMAN, "podman-teardown").await;
    }
}
