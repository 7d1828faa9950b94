//! How a session's images come to be: pulled under the pull policy (the image named, a
//! Dockerfile's bases), with progress reported, and the images built for it labelled as
//! this library's (managed, base directory, tag, kind) so that `prune` can find them and
//! never another's. No label changes from one build to the next (a build time would): an
//! unchanged build stays one cached image, and the engine's creation time dates it.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use tokio::io::AsyncReadExt;

use crate::devcontainer::{base_images, BuildConfig};
use crate::engine::{ensure_image, Engine, ImageRequest, PullPolicy};
use crate::error::{Error, ErrorCode, Result};
use crate::progress::{Phase, Progress};
use crate::runtime::labels;

/// The most read of a Dockerfile to find its bases.
const DOCKERFILE_LIMIT: u64 = 1 << 20;

/// What a derived image is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DerivedKind {
    /// devcontainer.json's `build`.
    Build,
    /// The image a session's features are installed in.
    Features,
    /// The remote user's ids changed to the host user's (`updateRemoteUserUID`).
    Uid,
}

impl DerivedKind {
    fn as_str(self) -> &'static str {
        match self {
            DerivedKind::Build => "build",
            DerivedKind::Features => "features",
            DerivedKind::Uid => "uid",
        }
    }

    /// The progress phase its build's lines belong to.
    pub fn phase(self) -> Phase {
        match self {
            DerivedKind::Features => Phase::Features,
            _ => Phase::Build,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ImageSupply {
    pub pull: PullPolicy,
    pub progress: Progress,
    pub base_dir: PathBuf,
}

impl ImageSupply {
    /// The labels of an image built as `tag`.
    pub fn labels(&self, tag: &str, kind: DerivedKind) -> HashMap<String, String> {
        HashMap::from([
            (labels::MANAGED.to_string(), "true".to_string()),
            (
                labels::BASE_DIR.to_string(),
                self.base_dir.to_string_lossy().into_owned(),
            ),
            (labels::IMAGE_TAG.to_string(), tag.to_string()),
            (labels::IMAGE_KIND.to_string(), kind.as_str().to_string()),
        ])
    }

    /// `image` present as the policy wants it.
    pub async fn ensure(&self, engine: &Engine, image: &str, platform: Option<&str>) -> Result<()> {
        let request = ImageRequest {
            image,
            platform,
            progress: &self.progress,
        };
        ensure_image(engine, &request, self.pull).await
    }

    /// The images `build`'s Dockerfile starts from, present as the policy wants them
    /// (a base that cannot be read from the file is left to the builder).
    pub async fn ensure_bases(
        &self,
        engine: &Engine,
        build: &BuildConfig,
        platform: Option<&str>,
    ) -> Result<()> {
        let mut text = String::new();
        tokio::fs::File::open(&build.dockerfile)
            .await
            .map_err(|e| dockerfile_error(build, e))?
            .take(DOCKERFILE_LIMIT)
            .read_to_string(&mut text)
            .await
            .map_err(|e| dockerfile_error(build, e))?;
        let args: BTreeMap<String, String> = build.args.clone();
        for base in base_images(&text, &args) {
            self.ensure(engine, &base, platform).await?;
        }
        Ok(())
    }
}

fn dockerfile_error(build: &BuildConfig, e: std::io::Error) -> Error {
    Error::new(
        ErrorCode::Devcontainer,
        format!("Dockerfile {}: {e}", build.dockerfile.display()),
    )
}
