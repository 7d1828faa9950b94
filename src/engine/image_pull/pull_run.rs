//! One pull through the Engine API's `POST /images/create`: the registry's credentials
//! from the host's docker config, the engine's messages read into summed byte progress,
//! and the stream bounded by the engine's timeout between two messages (the request
//! timeout covers only the wait for the response's headers): a stalled pull rejects
//! `TIMEOUT` and the rest of its stream is dropped, which cancels it in the engine.

use bollard::auth::DockerCredentials;
use bollard::errors::Error as B;
use bollard::query_parameters::CreateImageOptionsBuilder;
use futures_util::StreamExt;

use super::image_reference::ImageReference;
use super::layer_progress::LayerProgress;
use super::pull_failure::PullContext;
use crate::engine::connection::Engine;
use crate::engine::engine_error::from_bollard;
use crate::error::Result;
use crate::progress::{Phase, Progress, INTERVAL};
use crate::registry_auth::{credentials_for, RegistryCredentials};

fn engine_credentials(c: &RegistryCredentials) -> DockerCredentials {
    DockerCredentials {
        username: Some(c.username.clone()).filter(|u| !u.is_empty()),
        password: Some(c.password.clone()).filter(|p| !p.is_empty()),
        identitytoken: c.identity_token.clone(),
        serveraddress: Some(c.server_address.clone()),
        ..Default::default()
    }
}

/// Pulls `image` (for `platform` when given), reporting `pull` events for it.
pub async fn run_pull(
    engine: &Engine,
    image: &str,
    platform: Option<&str>,
    progress: &Progress,
) -> Result<()> {
    let reference = ImageReference::parse(image)?;
    let credentials = credentials_for(&reference.registry).await?;
    let context = PullContext {
        image,
        reference: &reference,
        platform,
        endpoint: engine.endpoint().to_string(),
        credentials: credentials.as_ref(),
    };
    let mut options = CreateImageOptionsBuilder::default()
        .from_image(&reference.repository)
        .tag(&reference.tag);
    if let Some(platform) = platform {
        options = options.platform(platform);
    }
    let mut stream = engine.docker().create_image(
        Some(options.build()),
        None,
        credentials.as_ref().map(engine_credentials),
    );
    let bound = engine.timeout();
    let mut layers = LayerProgress::default();
    progress.stream(Phase::Pull, image, Some((0, 0)));
    // While the engine is quiet, a held-back event still goes out when due.
    let mut tick = tokio::time::interval(INTERVAL);
    let mut deadline = tokio::time::Instant::now() + bound;
    let failed = loop {
        tokio::select! {
            next = stream.next() => match next {
                None => break None,
                Some(Ok(info)) => {
                    deadline = tokio::time::Instant::now() + bound;
                    layers.read(&info);
                    progress.stream(Phase::Pull, image, Some(layers.bytes()));
                }
                Some(Err(err)) => break Some(err),
            },
            _ = tick.tick() => progress.flush(Phase::Pull),
            _ = tokio::time::sleep_until(deadline) => break Some(B::RequestTimeoutError),
        }
    };
    drop(stream);
    if let Some(err) = failed {
        progress.finish(Phase::Pull, None);
        return Err(failure(engine, &context, err).await);
    }
    let (_, total) = layers.bytes();
    progress.finish(Phase::Pull, Some((image, Some((total, total)))));
    Ok(())
}

/// The coded error of a pull the engine failed (the registry asked what it answers), or
/// that brought no message within the engine's timeout.
async fn failure(engine: &Engine, context: &PullContext<'_>, err: B) -> crate::error::Error {
    match err {
        // dockerd's refusal of the request itself (a malformed reference or platform): no
        // registry was asked.
        B::DockerResponseServerError {
            status_code: 400, ..
        } => redacted(context, from_bollard(err, &subject(context))),
        B::DockerResponseServerError { message, .. } => context.failed(engine, &message).await,
        B::DockerStreamError { error } => context.failed(engine, &error).await,
        B::RequestTimeoutError => context.stalled(engine.timeout()),
        other => redacted(context, from_bollard(other, &subject(context))),
    }
}

fn subject(context: &PullContext<'_>) -> String {
    format!("pull of image '{}'", context.image)
}

fn redacted(context: &PullContext<'_>, mut err: crate::error::Error) -> crate::error::Error {
    if let Some(c) = context.credentials {
        err.message = c.redact(&err.message);
    }
    err
}
