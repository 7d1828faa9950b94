//! The agent put into a container that cannot mount it (an engine elsewhere, an image
//! without the mount): the binary for the container's architecture uploaded through the
//! engine into the first folder where it runs, and started there (on its exec stream: such a
//! container has no line folder).

use bollard::models::ContainerInspectResponse;
use bytes::Bytes;

use super::agent_choice::agent_for_container;
use super::agent_connection::AgentConnection;
use crate::container_archive::{EngineFiles, EntryOwner};
use crate::engine::Engine;

/// Where the agent is uploaded, in order, until one of them lets it run.
const UPLOAD_DIRS: [&str; 5] = ["/tmp", "/var/tmp", "/run", "/dev/shm", "/"];

/// Uploads the agent for `container`'s architecture where it may run, and starts it.
pub async fn upload_and_start(
    engine: &Engine,
    container: &str,
    inspected: &ContainerInspectResponse,
) -> std::result::Result<AgentConnection, String> {
    let binary = agent_for_container(engine, inspected).await?;
    let files = EngineFiles { engine, container };
    let name = format!(".container-isolation-agent-{}", binary.tag());
    let bytes = Bytes::from(binary.bytes.clone());
    let mut tried = Vec::new();
    for dir in UPLOAD_DIRS {
        let owner = EntryOwner { uid: 0, gid: 0 };
        if let Err(e) = files
            .write_file(dir, &name, bytes.clone(), 0o700, owner)
            .await
        {
            tried.push(format!("{dir}: {}", e.message));
            continue;
        }
        let path = format!("{}/{name}", dir.trim_end_matches('/'));
        let line =
            Err("the agent was uploaded into the container, which has no line folder".into());
        match AgentConnection::start(engine, container, &path, line).await {
            Ok(connection) => return Ok(connection),
            Err(e) => tried.push(format!("{dir}: {}", e.message)),
        }
    }
    Err(format!(
        "the agent could not be put anywhere it runs ({})",
        tried.join("; ")
    ))
}
