//! Whether the engine has an image, told apart from an engine that does not answer: only
//! the engine's `404` for `GET /images/<name>/json` (that endpoint's one "not found": no
//! such image, on dockerd and Podman alike) means absent; any other failure is returned
//! with its code (`ENGINE_UNAVAILABLE`, `TIMEOUT`, `ENGINE_ERROR`), never read as absent.

use std::borrow::Cow;

use bollard::errors::Error as BollardError;
use bollard::models::ImageInspect;

use super::connection::Engine;
use crate::error::Result;

/// A bare 64-hex id asked as `sha256:<id>`: Podman's compat API reads a bare id it has no
/// image for as a name, and answers that with a 500 ("cannot specify 64-byte hexadecimal
/// strings"); asked with the prefix, dockerd and Podman both answer 404.
fn lookup_name(image: &str) -> Cow<'_, str> {
    if image.len() == 64 && image.bytes().all(|b| b.is_ascii_hexdigit()) {
        Cow::Owned(format!("sha256:{image}"))
    } else {
        Cow::Borrowed(image)
    }
}

/// The engine's inspect of `image` (a name or an id), `None` when it has no such image.
pub async fn find_image(engine: &Engine, image: &str) -> Result<Option<ImageInspect>> {
    let name = lookup_name(image);
    let inspect = engine.docker().inspect_image(&name);
    let found = async {
        match inspect.await {
            Ok(inspected) => Ok(Some(inspected)),
            Err(BollardError::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(err) => Err(err),
        }
    };
    engine.call(&format!("image '{image}'"), found).await
}

/// Whether the engine has `image` (by name, whatever its platform).
pub async fn image_present(engine: &Engine, image: &str) -> Result<bool> {
    Ok(find_image(engine, image).await?.is_some())
}
