//! A volume read back while its session has no container: a container created (never
//! started, no network) from the session's image with the volume mounted read-only, read
//! through the archive endpoint, then removed. It carries the caller's labels, so that one
//! left behind by a crash is reaped like the session's own.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType};
use bollard::query_parameters::{CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder};

use super::tree_download::download_tree;
use crate::engine::Engine;
use crate::error::Result;
use crate::tar_extract::{ExtractLimits, Extracted};

/// What to read: `volume` as mounted at `mount_path` in a container of `image`.
pub struct VolumeRead<'a> {
    pub volume: &'a str,
    pub mount_path: &'a str,
    pub image: &'a str,
    pub labels: BTreeMap<String, String>,
}

/// Writes the volume's tree into the empty directory `into`, through a reader container.
pub async fn read_volume(
    engine: &Engine,
    read: VolumeRead<'_>,
    into: PathBuf,
    limits: ExtractLimits,
) -> Result<Extracted> {
    let name = format!(
        "{}-reader-{}",
        read.volume,
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    let body = ContainerCreateBody {
        image: Some(read.image.to_string()),
        cmd: Some(vec!["true".into()]),
        labels: Some(read.labels.into_iter().collect()),
        network_disabled: Some(true),
        host_config: Some(HostConfig {
            mounts: Some(vec![Mount {
                target: Some(read.mount_path.to_string()),
                source: Some(read.volume.to_string()),
                typ: Some(MountType::VOLUME),
                read_only: Some(true),
                ..Default::default()
            }]),
            network_mode: Some("none".into()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let options = CreateContainerOptionsBuilder::default().name(&name).build();
    let subject = format!("container '{name}'");
    engine
        .call(
            &subject,
            engine.docker().create_container(Some(options), body),
        )
        .await?;
    let read = download_tree(engine, &name, read.mount_path, into, limits).await;
    let options = RemoveContainerOptionsBuilder::default()
        .force(true)
        .v(true)
        .build();
    let removed = engine
        .call(
            &subject,
            engine.docker().remove_container(&name, Some(options)),
        )
        .await;
    if let Err(err) = removed {
        tracing::warn!("{subject}: not removed: {err}");
    }
    read
}
