//! How a new container gets its session agent at `AGENT_MOUNT`: bind-mounted read-only from
//! a private copy on this machine where the engine shares its files, else uploaded into the
//! created (not yet started) container through the archive endpoint, root-owned, mode 0755,
//! and the container labelled with the upload's digest so that the agent is found there.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bollard::models::{ContainerCreateBody, Mount, MountType};
use bytes::Bytes;

use crate::agent::{agent_for_new_container, AgentBinary};
use crate::container_archive::{EngineFiles, EntryOwner};
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::labels;

#[derive(Debug, Clone)]
pub enum AgentDelivery {
    /// A host file the container bind-mounts read-only.
    Mount(PathBuf),
    /// Bytes put into the created container before it starts.
    Upload(Arc<AgentBinary>),
}

impl AgentDelivery {
    /// The mount where the engine is on this machine and a private copy can be made, else
    /// the upload; or why no agent exists for a container of `image` at all. An engine that
    /// does not answer is the outer error.
    pub async fn choose(
        engine: &Engine,
        base_dir: &Path,
        image: &str,
        platform: Option<&str>,
        upload: bool,
    ) -> Result<std::result::Result<AgentDelivery, String>> {
        let binary = match agent_for_new_container(engine, image, platform).await? {
            Ok(binary) => binary,
            Err(why) => return Ok(Err(why)),
        };
        if engine.is_local() && !upload {
            if let Some(copy) = binary.private_copy(base_dir) {
                return Ok(Ok(AgentDelivery::Mount(copy)));
            }
        }
        Ok(Ok(AgentDelivery::Upload(binary)))
    }

    /// Adds the mount, or the label that says the agent is uploaded, to a create request.
    pub fn apply(&self, body: &mut ContainerCreateBody) {
        match self {
            AgentDelivery::Mount(source) => {
                let mount = Mount {
                    target: Some(crate::runtime::AGENT_MOUNT.to_string()),
                    source: Some(source.to_string_lossy().into_owned()),
                    typ: Some(MountType::BIND),
                    read_only: Some(true),
                    ..Default::default()
                };
                if let Some(host) = body.host_config.as_mut() {
                    host.mounts.get_or_insert_with(Vec::new).push(mount);
                }
            }
            AgentDelivery::Upload(binary) => {
                body.labels
                    .get_or_insert_with(Default::default)
                    .insert(labels::AGENT_UPLOAD.to_string(), binary.digest.clone());
            }
        }
    }

    /// Puts an uploaded agent into the created `container`; nothing to do for a mount.
    pub async fn deliver(&self, engine: &Engine, container: &str) -> Result<()> {
        let AgentDelivery::Upload(binary) = self else {
            return Ok(());
        };
        let (dir, name) = crate::runtime::AGENT_MOUNT
            .rsplit_once('/')
            .unwrap_or(("", crate::runtime::AGENT_MOUNT));
        let files = EngineFiles { engine, container };
        let owner = EntryOwner { uid: 0, gid: 0 };
        let dir = if dir.is_empty() { "/" } else { dir };
        let bytes = Bytes::from(binary.bytes.clone());
        files.write_file(dir, name, bytes, 0o755, owner).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_adds_a_read_only_bind_and_no_label() {
        let mut body = ContainerCreateBody {
            host_config: Some(Default::default()),
            ..Default::default()
        };
        AgentDelivery::Mount(PathBuf::from("/b/agent")).apply(&mut body);
        let mounts = body.host_config.unwrap().mounts.unwrap();
        assert_eq!(
            mounts[0].target.as_deref(),
            Some(crate::runtime::AGENT_MOUNT)
        );
        assert_eq!(mounts[0].read_only, Some(true));
        assert!(body.labels.is_none());
    }
}
