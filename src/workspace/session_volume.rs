//! A `volume` session's container: its repository in the named volume `record.volume`,
//! mounted where the clone would be bind-mounted, made and labelled as ours at the first
//! create and filled from the host clone before the container first starts; a recreate
//! finds it filled. The files go to the user the session's tools run as.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::session_container::SessionContainer;
use super::workspace_record::WorkspaceRecord;
use super::workspace_storage::Storage;
use crate::agent::resolve_user;
use crate::container_archive::{EngineFiles, EntryOwner};
use crate::container_runtime::ContainerConfig;
use crate::error::{Error, Result};
use crate::fileio::AccountFiles;
use crate::runtime::labels::{self, container_labels, LabelContext};
use crate::runtime::{ContainerMount, Lifetime, MountKind, OwnerIdentity};
use crate::session_settings::MountOrigin;
use crate::workspace_volume::{create_volume, remove_volume, upload_tree};

/// The volume of a `volume` session; `None` for a bind one.
pub fn session_volume(record: &WorkspaceRecord) -> Result<Option<&str>> {
    match record.storage {
        Storage::Bind => Ok(None),
        Storage::Pod => Err(Error::invalid_argument(format!(
            "workspace '{}' is a session on Kubernetes: open it with `engine: {{ kubernetes }}`",
            record.session_id
        ))),
        Storage::Volume => record.volume.as_deref().map(Some).ok_or_else(|| {
            Error::invalid_argument(format!(
                "workspace '{}' has volume storage but no volume",
                record.session_id
            ))
        }),
    }
}

/// Our labels on a session's volume: those its container gets, and the container's name.
pub(super) fn volume_labels(
    record: &WorkspaceRecord,
    lifetime: Lifetime,
    base_dir: &str,
) -> BTreeMap<String, String> {
    let mut labels = container_labels(
        &BTreeMap::new(),
        &LabelContext {
            session: &record.session_id,
            image: &record.image,
            lifetime,
            base_dir,
            clone_path: &record.clone_path,
            project_dir: &record.project_dir,
            job: false,
            owner: OwnerIdentity::current(),
            created_at_ms: chrono::Utc::now().timestamp_millis(),
        },
    );
    labels.insert(labels::CONTAINER.into(), record.container_id.clone());
    labels
}

impl SessionContainer<'_> {
    /// For a `volume` session: the clone's own mount becomes the volume's, and the volume is
    /// made if it is not there; true when it was made now (and so must be filled).
    pub(super) async fn use_volume(
        &self,
        config: &mut ContainerConfig,
        lifetime: Lifetime,
    ) -> Result<bool> {
        let Some(volume) = session_volume(self.record)? else {
            return Ok(false);
        };
        let clone_root = self
            .settings
            .mounts
            .iter()
            .find(|m| matches!(&m.origin, MountOrigin::Clone { relative } if relative.as_os_str().is_empty()))
            .map(|m| m.mount.target.clone())
            .unwrap_or_else(|| self.settings.mount_path.clone());
        config.mounts.retain(|m| m.target != clone_root);
        let mut mount = ContainerMount::new(MountKind::Volume, volume, &clone_root);
        mount.no_copy = true;
        config.mounts.insert(0, mount);
        let base_dir = self.runtime.base_dir().to_string_lossy();
        let labels = volume_labels(self.record, lifetime, &base_dir);
        create_volume(self.engine, volume, &labels).await
    }

    /// Uploads the host clone into the new volume through the created container, owned by
    /// the user the session's tools run as.
    pub(super) async fn fill_volume(&self) -> Result<()> {
        let container = &self.record.container_id;
        let owner = self.volume_owner().await;
        let clone = PathBuf::from(&self.record.clone_path);
        let target = self.settings.mount_path.clone();
        upload_tree(self.engine, container, clone, &target, owner).await
    }

    /// Removes a volume made by a create that failed (the host clone keeps the work).
    pub(super) async fn discard_volume(&self) {
        if let Ok(Some(volume)) = session_volume(self.record) {
            let _ = remove_volume(self.engine, volume).await;
        }
    }

    /// The remote user's ids (else the container's user's) from the created container's
    /// own account files; root when there is no such user or it cannot be read.
    async fn volume_owner(&self) -> EntryOwner {
        let container = &self.record.container_id;
        let configured = match self.settings.remote_user() {
            Some(user) => Some(user.to_string()),
            None => self
                .engine
                .inspect_container(container, container)
                .await
                .ok()
                .and_then(|c| c.config)
                .and_then(|c| c.user),
        };
        let Some(spec) = configured.filter(|u| !u.is_empty()) else {
            return EntryOwner { uid: 0, gid: 0 };
        };
        let files = AccountFiles {
            container,
            host: None,
            agent: None,
            engine: Some(EngineFiles {
                engine: self.engine,
                container,
            }),
        };
        match resolve_user(&files, &spec).await {
            Ok(ids) => ids.owner(),
            Err(err) => {
                tracing::warn!("container '{container}': volume owned by root: {err}");
                EntryOwner { uid: 0, gid: 0 }
            }
        }
    }
}
