//! Creating a container from an image that may first have to be pulled: with `missing`
//! the create is tried and the image pulled only when the engine has none for the name
//! and platform (as `docker run` does), with `always` it is pulled first, with `never` a
//! missing image is `IMAGE_NOT_FOUND`. A failed pull creates nothing.

use bollard::models::ContainerCreateBody;
use bollard::query_parameters::CreateContainerOptionsBuilder;

use crate::agent::{image_arch, platform_arch, AgentArch};
use crate::engine::{not_pulled, pull_image, Engine, ImageRequest, PullPolicy};
use crate::error::{Error, ErrorCode, Result};

/// One create call; a missing image (for the platform) is `IMAGE_NOT_FOUND`.
pub(super) async fn create_container(
    engine: &Engine,
    name: &str,
    request: &ImageRequest<'_>,
    body: ContainerCreateBody,
) -> Result<()> {
    let options = CreateContainerOptionsBuilder::default()
        .name(name)
        .platform(request.platform.unwrap_or_default())
        .build();
    let image = match request.platform {
        Some(platform) => format!("{}' for platform '{platform}", request.image),
        None => request.image.to_string(),
    };
    let subject = format!("container '{name}' from image '{image}'");
    match engine
        .call(
            &subject,
            engine.docker().create_container(Some(options), body),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(err) if err.code == ErrorCode::ImageNotFound || err.code == ErrorCode::Enoent => {
            Err(Error::new(ErrorCode::ImageNotFound, err.message))
        }
        Err(err) => Err(err),
    }
}

/// The same architecture, whatever the spelling (`amd64`/`x86_64`, `arm64`/`aarch64`).
fn same_arch(a: &str, b: &str) -> bool {
    match (AgentArch::from_name(a), AgentArch::from_name(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// With a platform asked for, the image present for it before anything else is decided
/// from the image (the agent's architecture): pulled for it as `policy` says, else
/// `IMAGE_NOT_FOUND` naming the platform.
pub(super) async fn ensure_for_platform(
    engine: &Engine,
    request: &ImageRequest<'_>,
    policy: PullPolicy,
) -> Result<()> {
    let Some(wanted) = request.platform.and_then(platform_arch) else {
        return Ok(());
    };
    let present = image_arch(engine, request.image).await?;
    if policy != PullPolicy::Always && present.is_some_and(|arch| same_arch(&arch, &wanted)) {
        return Ok(());
    }
    match policy {
        PullPolicy::Never => Err(not_pulled(engine, request, "no image for that platform")),
        _ => pull_image(engine, request).await,
    }
}

/// Creates the container, the image pulled first as `policy` says.
pub(super) async fn create_pulling(
    engine: &Engine,
    name: &str,
    request: &ImageRequest<'_>,
    policy: PullPolicy,
    body: ContainerCreateBody,
) -> Result<()> {
    if policy == PullPolicy::Always {
        pull_image(engine, request).await?;
    }
    let first = create_container(engine, name, request, body.clone()).await;
    let missing = match first {
        Err(err) if err.code == ErrorCode::ImageNotFound => err,
        other => return other,
    };
    match policy {
        PullPolicy::Never => Err(not_pulled(engine, request, &missing.message)),
        PullPolicy::Always => Err(pulled_but_missing(engine, missing)),
        PullPolicy::Missing => {
            pull_image(engine, request).await?;
            create_container(engine, name, request, body)
                .await
                .map_err(|err| match err.code {
                    ErrorCode::ImageNotFound => pulled_but_missing(engine, err),
                    _ => err,
                })
        }
    }
}

/// The engine still has no image for the name and platform after a pull that succeeded.
fn pulled_but_missing(engine: &Engine, err: Error) -> Error {
    Error::new(
        ErrorCode::ImageNotFound,
        format!(
            "{} (pulled, but the engine {} has no such image for the create)",
            err.message,
            engine.endpoint()
        ),
    )
}
