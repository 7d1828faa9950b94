//! The container half of a checkpoint: the engine's commit of the session's container into
//! an image labelled as the session's checkpoint, and the whole checkpoint taken with the
//! container paused — pause, the repository half, commit (`pause=false`: it is paused
//! already), unpause, on every path — so that nothing the session runs changes either
//! half between the two. Checkpoint images carry `managed`, `session`, `base-dir`,
//! `image-kind=checkpoint` and `checkpoint=<id>`, and every other label of ours the
//! container carried, empty (a commit keeps the container's labels, and no engine drops
//! one). `prune` leaves them alone: they go with their checkpoint (`delete`, the bound on
//! how many are kept) or their session.

use std::collections::HashMap;

use bollard::models::ContainerConfig;
use bollard::query_parameters::{
    CommitContainerOptionsBuilder, InspectContainerOptionsBuilder, RemoveImageOptionsBuilder,
};

use super::checkpoint_store::CheckpointStore;
use super::take::{take_checkpoint, TakeRequest};
use super::CheckpointRecord;
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::labels;

/// The repository every checkpoint image is tagged in.
pub const CHECKPOINT_REPO: &str = "container-isolation-checkpoint";

/// A checkpoint image, as the engine lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointImage {
    pub id: String,
    pub tags: Vec<String>,
    pub session: String,
    pub checkpoint: String,
}

/// The labels of `session`'s checkpoint `id`.
pub fn checkpoint_labels(base_dir: &str, session: &str, id: &str) -> HashMap<String, String> {
    HashMap::from([
        (labels::MANAGED.to_string(), "true".to_string()),
        (labels::SESSION.to_string(), session.to_string()),
        (labels::BASE_DIR.to_string(), base_dir.to_string()),
        (labels::IMAGE_KIND.to_string(), "checkpoint".to_string()),
        (labels::CHECKPOINT.to_string(), id.to_string()),
    ])
}

/// Our labels the container carries (its own and its image's), which its commit would
/// keep: they name that container's owner, clone, pool or build, so the checkpoint's image
/// gets them empty (neither engine can drop a label from a commit).
async fn inherited_labels(engine: &Engine, container: &str) -> Result<Vec<String>> {
    let info = engine
        .call(
            &format!("container '{container}'"),
            engine.docker().inspect_container(container, None),
        )
        .await?;
    let carried = info.config.and_then(|c| c.labels).unwrap_or_default();
    Ok(carried
        .into_keys()
        .filter(|k| k.starts_with(labels::PREFIX))
        .collect())
}

/// Commits `container` (already paused, or not: the engine is told not to pause it) into
/// `<CHECKPOINT_REPO>:<session>-<id>` with the checkpoint's labels; the image's id.
pub async fn commit_container(
    engine: &Engine,
    container: &str,
    base_dir: &str,
    session: &str,
    id: &str,
) -> Result<String> {
    let tag = format!("{session}-{id}");
    let mut labels = checkpoint_labels(base_dir, session, id);
    for key in inherited_labels(engine, container).await? {
        labels.entry(key).or_default();
    }
    let changes: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("LABEL {k}={}", serde_json::Value::from(v.as_str())))
        .collect();
    let options = CommitContainerOptionsBuilder::default()
        .container(container)
        .repo(CHECKPOINT_REPO)
        .tag(&tag)
        .comment(&format!("container-isolation checkpoint {id} of {session}"))
        .pause(false)
        .changes(&changes.join("\n"))
        .build();
    let config = ContainerConfig {
        labels: Some(labels),
        ..Default::default()
    };
    let committed = engine
        .call(
            &format!("commit of container '{container}'"),
            engine.docker().commit_container(options, config),
        )
        .await?;
    Ok(full_id(&committed.id))
}

/// An image id as dockerd gives it, `sha256:<hex>` (Podman answers some calls without the
/// prefix).
fn full_id(id: &str) -> String {
    match id.starts_with("sha256:") {
        true => id.to_string(),
        false => format!("sha256:{id}"),
    }
}

/// Whether `container` runs unpaused (so that something in it could write).
async fn running(engine: &Engine, container: &str) -> Result<bool> {
    let info = engine
        .call(
            &format!("container '{container}'"),
            engine.docker().inspect_container(container, None),
        )
        .await?;
    let state = info.state.unwrap_or_default();
    Ok(state.running == Some(true) && state.paused != Some(true))
}

/// How many times a pause is asked for: cgroup v1's freezer gives up on a tree that forks
/// faster than it freezes (runc answers "failed"), which a moment later it freezes.
const PAUSE_ATTEMPTS: u32 = 4;

/// Pauses `container`, asking again after a refusal of the engine while it still runs.
async fn pause(engine: &Engine, container: &str) -> Result<()> {
    let mut attempt = 1;
    loop {
        let paused = engine
            .call(
                &format!("pause of container '{container}'"),
                engine.docker().pause_container(container),
            )
            .await;
        match paused {
            Err(err)
                if err.code == crate::error::ErrorCode::EngineError
                    && attempt < PAUSE_ATTEMPTS
                    && running(engine, container).await? =>
            {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
            other => return other,
        }
    }
}

/// Runs `work` with `container` paused, unpausing it whatever `work` returns; a container
/// stopped or paused already (by the caller) is left as it is.
async fn while_paused<T>(
    engine: &Engine,
    container: &str,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    if !running(engine, container).await? {
        return work.await;
    }
    pause(engine, container).await?;
    let result = work.await;
    let unpaused = engine
        .call(
            &format!("unpause of container '{container}'"),
            engine.docker().unpause_container(container),
        )
        .await;
    match (result, unpaused) {
        (Ok(value), Ok(())) => Ok(value),
        (Err(e), _) | (Ok(_), Err(e)) => Err(e),
    }
}

/// A whole checkpoint of a session: its container paused, `before` run (a volume
/// session's repository read back into the clone), the repository half taken, the
/// container committed, unpaused; then the oldest checkpoints past `keep` dropped with
/// their images. A failed commit leaves no checkpoint recorded.
pub async fn checkpoint_session(
    engine: &Engine,
    container: &str,
    take: TakeRequest,
    keep: usize,
    before: impl std::future::Future<Output = Result<()>>,
) -> Result<CheckpointRecord> {
    let base_dir = take.base_dir.clone();
    let session = take.session.clone();
    let base = base_dir.to_string_lossy().into_owned();
    let record = while_paused(engine, container, async {
        before.await?;
        let mut record = tokio::task::spawn_blocking(move || take_checkpoint(take))
            .await
            .map_err(|e| Error::new(ErrorCode::Git, format!("checkpoint: {e}")))??;
        match commit_container(engine, container, &base, &session, &record.id).await {
            Ok(image) => {
                record.image = Some(image);
                record.bytes = changed_bytes(engine, container).await;
                Ok(record)
            }
            Err(e) => {
                let _ =
                    CheckpointStore::open(&base_dir, &session).and_then(|s| s.delete(&record.id));
                Err(e)
            }
        }
    })
    .await?;
    let store = CheckpointStore::open(&base_dir, &session)?;
    store.update(&record)?;
    for dropped in store.keep_at_most(keep)? {
        if let Some(image) = dropped.image {
            let _ = remove_checkpoint_image(engine, &image).await;
        }
    }
    Ok(record)
}

/// The size of what `container` changed (its own layer), as the engine counts it.
async fn changed_bytes(engine: &Engine, container: &str) -> Option<u64> {
    let options = InspectContainerOptionsBuilder::default().size(true).build();
    let inspected = engine
        .call(
            &format!("size of container '{container}'"),
            engine.docker().inspect_container(container, Some(options)),
        )
        .await
        .ok()?;
    inspected.size_rw.and_then(|b| u64::try_from(b).ok())
}

/// The checkpoint images of `base_dir` (of `session` only, when given).
pub async fn checkpoint_images(
    engine: &Engine,
    base_dir: &str,
    session: Option<&str>,
) -> Result<Vec<CheckpointImage>> {
    let label = format!("{}=checkpoint", labels::IMAGE_KIND);
    let listed = engine.labelled_images(&label, "checkpoint images").await?;
    Ok(listed
        .into_iter()
        .filter_map(|image| {
            let label = |key: &str| image.labels.get(key).cloned();
            let ours = label(labels::MANAGED).as_deref() == Some("true")
                && label(labels::BASE_DIR).as_deref() == Some(base_dir);
            let of_session = label(labels::SESSION)?;
            if !ours || session.is_some_and(|s| s != of_session) {
                return None;
            }
            Some(CheckpointImage {
                id: full_id(&image.id),
                tags: image.repo_tags.clone(),
                session: of_session,
                checkpoint: label(labels::CHECKPOINT)?,
            })
        })
        .collect())
}

/// Removes a checkpoint image (by id); gone already is fine, and one a container still
/// uses (a fork's, a restored session's) stays, never forced: Podman's forced removal
/// takes the containers with it. `reapOrphans` removes it once unused.
pub async fn remove_checkpoint_image(engine: &Engine, image: &str) -> Result<()> {
    let options = RemoveImageOptionsBuilder::default().force(false).build();
    match engine
        .call(
            &format!("checkpoint image {image}"),
            engine.docker().remove_image(image, Some(options), None),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.code == ErrorCode::ImageNotFound => Ok(()),
        Err(e) if in_use(&e.message) => {
            tracing::info!("checkpoint image {image} kept: a container uses it");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn in_use(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    ["in use", "being used", "conflict", "has dependent", "409"]
        .iter()
        .any(|m| message.contains(m))
}

/// The image a restored session's container is created from: the checkpoint's commit.
pub fn restore_image(record: &CheckpointRecord) -> Result<&str> {
    record.image.as_deref().ok_or_else(|| {
        Error::new(
            ErrorCode::ImageNotFound,
            format!("checkpoint {} has no container image", record.id),
        )
    })
}
