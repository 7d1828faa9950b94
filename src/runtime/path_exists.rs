//! Whether a path exists in a container, by the archive `HEAD` endpoint: no exec, so it
//! works on images without a shell and on containers that are not running.

use bollard::query_parameters::ContainerArchiveInfoOptionsBuilder;

use crate::engine::Engine;
use crate::error::{ErrorCode, Result};

pub async fn path_exists(engine: &Engine, container: &str, path: &str) -> Result<bool> {
    let options = ContainerArchiveInfoOptionsBuilder::default()
        .path(path)
        .build();
    let subject = format!("{path} in container '{container}'");
    let answer = engine
        .call(
            &subject,
            engine
                .docker()
                .get_container_archive_info(container, Some(options)),
        )
        .await;
    match answer {
        Ok(_) => Ok(true),
        Err(err) if err.code == ErrorCode::Enoent => Ok(false),
        Err(err) => Err(err),
    }
}
