//! Bringing an image into the engine from its registry, as `docker pull` does, under a
//! policy (`missing`, `always`, `never`): credentials from the host's docker config, the
//! bytes reported as `pull` progress, a stalled registry bounded by the engine's timeout.
//! `ensure_image` is the one door; `pull_image` is for a caller that found the image
//! missing itself (a container create that answered "no such image").

mod image_reference;
mod layer_progress;
mod pull_failure;
mod pull_run;
mod registry_access;

pub use image_reference::ImageReference;

use super::connection::Engine;
use super::image_lookup::image_present;
use crate::error::{Error, ErrorCode, Result};
use crate::progress::Progress;

/// When an image is pulled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PullPolicy {
    /// Only when the engine does not have it.
    #[default]
    Missing,
    /// Every time, so that a moved tag is followed.
    Always,
    /// Never: a missing image is `IMAGE_NOT_FOUND`.
    Never,
}

impl PullPolicy {
    pub fn parse(text: &str) -> Option<PullPolicy> {
        match text {
            "missing" => Some(PullPolicy::Missing),
            "always" => Some(PullPolicy::Always),
            "never" => Some(PullPolicy::Never),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PullPolicy::Missing => "missing",
            PullPolicy::Always => "always",
            PullPolicy::Never => "never",
        }
    }
}

/// What to bring in, and where its progress goes.
#[derive(Debug, Clone, Copy)]
pub struct ImageRequest<'a> {
    pub image: &'a str,
    /// `os/arch[/variant]`; the engine's own when `None`.
    pub platform: Option<&'a str>,
    pub progress: &'a Progress,
}

/// The `IMAGE_NOT_FOUND` of an image the policy does not let be pulled.
pub fn not_pulled(engine: &Engine, request: &ImageRequest<'_>, reason: &str) -> Error {
    let image = match request.platform {
        Some(platform) => format!("image '{}' for platform '{platform}'", request.image),
        None => format!("image '{}'", request.image),
    };
    Error::new(
        ErrorCode::ImageNotFound,
        format!(
            "{image} is not present in the engine {} and pull is 'never' (pull or build it first): {reason}",
            engine.endpoint()
        ),
    )
}

/// Pulls `request.image` now, whether or not the engine has it.
pub async fn pull_image(engine: &Engine, request: &ImageRequest<'_>) -> Result<()> {
    pull_run::run_pull(engine, request.image, request.platform, request.progress).await
}

/// The image present in the engine as `policy` wants it: pulled when missing (or always).
pub async fn ensure_image(
    engine: &Engine,
    request: &ImageRequest<'_>,
    policy: PullPolicy,
) -> Result<()> {
    if policy == PullPolicy::Always {
        return pull_image(engine, request).await;
    }
    if image_present(engine, request.image).await? {
        return Ok(());
    }
    match policy {
        PullPolicy::Never => Err(not_pulled(engine, request, "no such image")),
        _ => pull_image(engine, request).await,
    }
}
