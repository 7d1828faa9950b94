//! Warm pool members for sessions: a session's container made ahead from the settings of
//! the latest session — its clone folder standing in for the clone, labelled with the pool
//! key, started with its relay holding every connection and with no lifecycle command run
//! (the policy and those are the claiming session's). Bind storage (this machine's engine
//! only) mounts the member's own empty folder; volume storage (any engine) an empty volume
//! of the member's, which the claim fills. Settings whose container could not stand in for
//! another session's (mounts of folders inside the clone) make no members.

use std::path::{Path, PathBuf};

use super::session_container::SessionContainer;
use super::workspace_record::WorkspaceRecord;
use super::workspace_storage::{volume_name, Storage};
use crate::container_runtime::{ContainerRuntime, DockerRuntime, RuntimeOptions};
use crate::egress::Egress;
use crate::engine::{find_image, EngineOptions, PullPolicy};
use crate::error::{Error, ErrorCode, Result};
use crate::progress::Progress;
use crate::runtime::Lifetime;
use crate::session_images::ImageSupply;
use crate::session_settings::{MountOrigin, ProbeCache, SessionSettings};
use crate::warm_pool::{MemberFactory, PoolKey};
use crate::workspace_volume::remove_member_volume;

/// Where the settings' clone path was: a control character, which JSON text never holds
/// unescaped.
const CLONE_MARK: &str = "\u{1}clone\u{1}";

/// What members of one set of settings are made from.
pub struct MemberRecipe {
    /// The settings as JSON, their clone path as `CLONE_MARK`.
    settings: String,
    lifetime: Lifetime,
    egress: Option<Egress>,
    memory: Option<u64>,
    storage: Storage,
}

/// `text` as it appears inside a JSON string.
fn json_text(text: &str) -> Result<String> {
    let quoted = serde_json::to_string(text).map_err(|e| Error::invalid_argument(e.to_string()))?;
    Ok(quoted[1..quoted.len() - 1].to_string())
}

/// The settings as JSON with `clone` marked, their warnings left out (they tell of the
/// settings, the container is not made from them).
fn marked_settings(settings: &SessionSettings, clone: &str) -> Result<String> {
    let mut settings = settings.clone();
    settings.warnings.clear();
    let json =
        serde_json::to_string(&settings).map_err(|e| Error::invalid_argument(e.to_string()))?;
    Ok(json.replace(&json_text(clone)?, CLONE_MARK))
}

/// The key and recipe of members that could be this new container; `None` when its
/// settings make none.
pub(super) async fn recipe_for(
    container: &SessionContainer<'_>,
    lifetime: Lifetime,
) -> Result<Option<(PoolKey, MemberRecipe)>> {
    let (record, settings) = (container.record, container.settings);
    let inner_mounts = settings.mounts.iter().any(|m| {
        matches!(&m.origin, MountOrigin::Clone { relative } if !relative.as_os_str().is_empty())
    });
    let bind = record.storage == Storage::Bind;
    if !cfg!(target_os = "linux") || (bind && !container.engine.is_local()) || inner_mounts {
        return Ok(None);
    }
    let Some(image_id) = find_image(container.engine, settings.run_image())
        .await?
        .and_then(|image| image.id)
    else {
        return Ok(None);
    };
    let marked = marked_settings(settings, &record.clone_path)?;
    let storage = record.storage;
    let key = PoolKey::of(&[&marked, &image_id, lifetime.as_str(), storage.as_str()]);
    let recipe = MemberRecipe {
        settings: marked,
        lifetime,
        egress: container.egress.clone(),
        memory: settings.effective_memory().map(|m| m.max(0) as u64),
        storage,
    };
    Ok(Some((key, recipe)))
}

/// Makes and removes the members of a `Workspaces`' pool, through a runtime of its own.
pub struct SessionMembers {
    runtime: DockerRuntime,
    engine: EngineOptions,
    probes: ProbeCache,
    base_dir: PathBuf,
}

impl SessionMembers {
    pub fn new(options: RuntimeOptions, base_dir: &Path) -> SessionMembers {
        SessionMembers {
            engine: options.engine.clone(),
            runtime: DockerRuntime::new(options),
            probes: ProbeCache::default(),
            base_dir: base_dir.to_path_buf(),
        }
    }
}

impl MemberFactory for SessionMembers {
    type Recipe = MemberRecipe;

    async fn make(
        &self,
        recipe: &MemberRecipe,
        key: &PoolKey,
        name: &str,
        folder: &Path,
    ) -> Result<String> {
        let folder = folder.to_string_lossy().into_owned();
        let json = recipe.settings.replace(CLONE_MARK, &json_text(&folder)?);
        let settings: SessionSettings = serde_json::from_str(&json).map_err(|e| {
            Error::new(
                ErrorCode::EngineError,
                format!("a warm pool member's settings: {e}"),
            )
        })?;
        let record = WorkspaceRecord {
            session_id: name.to_string(),
            project_dir: String::new(),
            clone_path: folder,
            branch_name: String::new(),
            base_commit: None,
            repository_url: None,
            snapshot_of: None,
            container_id: name.to_string(),
            container_mount_path: settings.mount_path.clone(),
            storage: recipe.storage,
            volume: (recipe.storage == Storage::Volume).then(|| volume_name(name)),
            image: settings.image.name().to_string(),
            lifetime: recipe.lifetime.as_str().to_string(),
            devcontainer: settings.config_path.is_some(),
            created_at_ms: chrono::Utc::now().timestamp_millis(),
            settings: None,
            compose: None,
            checkpoint_image: None,
            owner: None,
            pod_env: Default::default(),
            pod_resources: Default::default(),
            pod_egress: None,
        };
        // Whatever the lifetime of the sessions it is for, an unclaimed member goes with
        // this process: its exit hooks must look for it.
        crate::runtime::note_process_container(&self.engine);
        let engine = self.runtime.engine().await?;
        let container = SessionContainer {
            runtime: &self.runtime,
            engine: &engine,
            record: &record,
            settings: &settings,
            probes: &self.probes,
            egress: recipe.egress.clone(),
            supply: ImageSupply {
                pull: PullPolicy::Never,
                progress: Progress::none(),
                base_dir: self.base_dir.clone(),
            },
        };
        let held = recipe
            .egress
            .as_ref()
            .filter(|e| e.spec.relayed())
            .map(Egress::held);
        container
            .create_member(recipe.lifetime, key, held.as_ref())
            .await
    }

    /// Through the runtime, so that the member's handles and line folder go with it, and
    /// an unclaimed member's volume after it; one already gone (a reaper was faster) is fine.
    async fn remove(&self, name: &str) {
        let _ = self.runtime.remove(name).await;
        if let Ok(engine) = self.runtime.engine().await {
            remove_member_volume(&engine, name).await;
        }
    }

    fn memory(&self, recipe: &MemberRecipe) -> Option<u64> {
        recipe.memory
    }
}

impl SessionContainer<'_> {
    /// Creates and starts the container as a pool member (its relay, if relayed, holding
    /// every connection; no lifecycle command), its agent started under its engine id, which
    /// a rename does not change; that id.
    async fn create_member(
        &self,
        lifetime: Lifetime,
        key: &PoolKey,
        held: Option<&Egress>,
    ) -> Result<String> {
        let mut config = self.engine_config(lifetime).await?;
        config.pool = Some(key.as_str().to_string());
        self.use_volume(&mut config, lifetime).await?;
        let name = match self.runtime.create(config).await {
            Ok(name) => name,
            Err(err) => {
                self.discard_volume().await;
                return Err(err);
            }
        };
        let started = async {
            self.runtime.start_member(&name, held).await?;
            let id = self.runtime.inspect(&name).await?.engine_id;
            if self.runtime.uses_agent() {
                // Without an agent the session's calls take the engine path, as they would.
                let _ = crate::agent::agent_for(self.engine, &id).await;
            }
            Ok(id)
        };
        match started.await {
            Ok(id) => Ok(id),
            Err(err) => {
                let _ = self.runtime.remove(&name).await;
                self.discard_volume().await;
                Err(err)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clone_path_is_marked_wherever_it_appears() {
        let clone = Path::new("/b/sessions/session-s1");
        let mut settings = SessionSettings::plain(clone, "img".into(), "/workspace");
        settings
            .env
            .insert("WHERE".into(), "/b/sessions/session-s1/sub".into());
        settings.warnings.push("about session s1".into());
        let marked = marked_settings(&settings, "/b/sessions/session-s1").unwrap();
        assert!(!marked.contains("session-s1"), "{marked}");
        let mut other = SessionSettings::plain(
            Path::new("/b/sessions/session-s2"),
            "img".into(),
            "/workspace",
        );
        other
            .env
            .insert("WHERE".into(), "/b/sessions/session-s2/sub".into());
        assert_eq!(
            marked_settings(&other, "/b/sessions/session-s2").unwrap(),
            marked
        );
        let json = marked.replace(CLONE_MARK, &json_text("/b/pool/wp-x").unwrap());
        let member: SessionSettings = serde_json::from_str(&json).unwrap();
        assert_eq!(member.mounts[0].mount.source, "/b/pool/wp-x");
        assert_eq!(member.env["WHERE"], "/b/pool/wp-x/sub");
    }
}
