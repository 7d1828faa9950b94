//! Pruning for `Workspaces::prune`: the images this library built for this base directory
//! (labelled managed, with this base directory and the tag it gave them) that no container of
//! any kind uses, directly or as an ancestor of its image, removed; newest first, so that an
//! image built on another goes before it. An image without our labels, of another base
//! directory, or carrying them only by inheritance (not under the tag we gave it) is never
//! touched, nor is a session's checkpoint image.

use std::collections::HashSet;
use std::time::Duration;

use bollard::models::ImageSummary;
use bollard::query_parameters::{
    ListContainersOptionsBuilder, RemoveImageOptionsBuilder, TagImageOptionsBuilder,
};

use crate::engine::{image_present, Engine};
use crate::error::Result;
use crate::runtime::labels;

#[derive(Debug, Clone, Default)]
pub struct PruneRequest {
    /// Only images the engine made at least this long ago (a cached rebuild keeps its
    /// first creation time).
    pub older_than: Option<Duration>,
    /// Report what would be removed, remove nothing.
    pub dry_run: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Tags (an untagged image: its id) removed, or that would be.
    pub images_removed: Vec<String>,
    /// Ours, kept: in use, too recent, or the engine would not remove them.
    pub kept: Vec<String>,
}

fn bare_id(id: &str) -> &str {
    id.strip_prefix("sha256:").unwrap_or(id)
}

/// A tag as the engine lists it, without the prefixes Podman adds to a local name.
fn bare_tag(tag: &str) -> &str {
    tag.strip_prefix("docker.io/library/")
        .or_else(|| tag.strip_prefix("localhost/"))
        .unwrap_or(tag)
}

struct Candidate {
    id: String,
    tags: Vec<String>,
    created_at_ms: i64,
}

impl Candidate {
    fn name(&self) -> String {
        self.tags
            .first()
            .map(|t| bare_tag(t).to_string())
            .unwrap_or_else(|| self.id.clone())
    }

    /// Ours when listed under the tag we gave it, or untagged (an older build of it).
    fn of(summary: ImageSummary, base_dir: &str) -> Option<Candidate> {
        let label = |key: &str| summary.labels.get(key).map(String::as_str);
        if label(labels::MANAGED) != Some("true") || label(labels::BASE_DIR) != Some(base_dir) {
            return None;
        }
        // A session's checkpoint goes with its checkpoint or its session, never here.
        if label(labels::IMAGE_KIND) == Some("checkpoint") {
            return None;
        }
        let ours = label(labels::IMAGE_TAG)?;
        let tags: Vec<String> = summary
            .repo_tags
            .iter()
            .filter(|t| t.as_str() != "<none>:<none>")
            .cloned()
            .collect();
        if !tags.is_empty() && !tags.iter().any(|t| bare_tag(t) == ours) {
            return None;
        }
        let created_at_ms = summary.created.saturating_mul(1000);
        Some(Candidate {
            id: bare_id(&summary.id).to_string(),
            tags,
            created_at_ms,
        })
    }
}

async fn candidates(engine: &Engine, base_dir: &str) -> Result<Vec<Candidate>> {
    let label = format!("{}=true", labels::MANAGED);
    let listed = engine
        .labelled_images(&label, "images built by this library")
        .await?;
    let mut found: Vec<Candidate> = listed
        .into_iter()
        .filter_map(|s| Candidate::of(s, base_dir))
        .collect();
    found.sort_by_key(|c| std::cmp::Reverse(c.created_at_ms));
    Ok(found)
}

/// Every image a container (any container, running or not) is made from, and every
/// image those are built on.
async fn images_in_use(engine: &Engine) -> Result<HashSet<String>> {
    let options = ListContainersOptionsBuilder::default().all(true).build();
    let containers = engine.list_containers(options, "every container").await?;
    let direct: HashSet<String> = containers
        .into_iter()
        .filter_map(|c| c.image_id)
        .map(|id| bare_id(&id).to_string())
        .collect();
    let mut used = direct.clone();
    for id in &direct {
        let subject = format!("history of image {id}");
        if let Ok(history) = engine
            .call(&subject, engine.docker().image_history(id))
            .await
        {
            used.extend(history.into_iter().map(|h| bare_id(&h.id).to_string()));
        }
    }
    Ok(used)
}

/// Removes the image's tags (its id when it has none); `false`, with its tags put back,
/// when the engine keeps it (another image is built on it, a container appeared). An
/// engine that cannot say whether the image is gone gets its tags back too, and the error.
async fn remove(engine: &Engine, image: &Candidate) -> Result<bool> {
    let options = || RemoveImageOptionsBuilder::default().build();
    let names = if image.tags.is_empty() {
        vec![image.id.clone()]
    } else {
        image.tags.clone()
    };
    for name in &names {
        let _ = engine
            .docker()
            .remove_image(name, Some(options()), None)
            .await;
    }
    let present = image_present(engine, &image.id).await;
    if let Ok(false) = present {
        return Ok(true);
    }
    for tag in &image.tags {
        if let Some((repo, tag)) = tag.rsplit_once(':') {
            let options = TagImageOptionsBuilder::default()
                .repo(repo)
                .tag(tag)
                .build();
            let _ = engine.docker().tag_image(&image.id, Some(options)).await;
        }
    }
    present.map(|_| false)
}

/// Removes the derived images of `base_dir` no container uses.
pub async fn prune_images(
    engine: &Engine,
    base_dir: &str,
    request: PruneRequest,
) -> Result<PruneReport> {
    let found = candidates(engine, base_dir).await?;
    let used = images_in_use(engine).await?;
    let now = chrono::Utc::now().timestamp_millis();
    let young = |c: &Candidate| {
        request.older_than.is_some_and(|age| {
            now.saturating_sub(c.created_at_ms) < i64::try_from(age.as_millis()).unwrap_or(i64::MAX)
        })
    };
    let mut report = PruneReport::default();
    for image in found {
        let removable = !used.contains(&image.id) && !young(&image);
        let removed = removable && (request.dry_run || remove(engine, &image).await?);
        if removed {
            report.images_removed.push(image.name());
        } else {
            report.kept.push(image.name());
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(kind: &str) -> ImageSummary {
        let labels = [
            (labels::MANAGED, "true"),
            (labels::BASE_DIR, "/base"),
            (labels::IMAGE_TAG, "ci-build:x"),
            (labels::IMAGE_KIND, kind),
        ];
        ImageSummary {
            id: "sha256:ab".into(),
            repo_tags: vec!["ci-build:x".into()],
            labels: labels
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_checkpoint_image_is_never_a_candidate() {
        assert!(Candidate::of(summary("build"), "/base").is_some());
        assert!(Candidate::of(summary("checkpoint"), "/base").is_none());
    }
}
