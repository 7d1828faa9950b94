//! A new session's container from the warm pool: a ready member made for the same settings
//! is claimed (taken under the pool's lock, then renamed to the session's container name,
//! which the engine gives to one container only), the session's clone moved into the
//! member's folder, its relay started under the session's policy and the lifecycle commands
//! of a new container run. Without a member, the container is made as without a pool; either
//! way the pool then makes members for these settings.

use std::path::PathBuf;

use super::pool_members::{recipe_for, SessionMembers};
use super::session_container::SessionContainer;
use super::workspaces::{blocking_error, Workspaces};
use crate::error::Result;
use crate::runtime::{ContainerRuntime, ContainerState, Lifetime};
use crate::warm_pool::{place_clone, Creating, Member, PoolKey, PoolStatus};

impl Workspaces {
    /// While held, the pool makes no member.
    pub(super) fn pool_pause(&self) -> Option<Creating<SessionMembers>> {
        self.pool.as_ref().map(|pool| pool.creating())
    }

    /// The session's new container: a claimed member, else made; the pool then wants
    /// members for its settings.
    pub(super) async fn create_or_claim(
        &self,
        container: &SessionContainer<'_>,
        lifetime: Lifetime,
    ) -> Result<()> {
        let warm = match &self.pool {
            Some(_) => recipe_for(container, lifetime).await.unwrap_or_else(|err| {
                tracing::warn!("warm pool: settings not pooled: {err}");
                None
            }),
            None => None,
        };
        let claimed = match &warm {
            Some((key, _)) => self.claim_member(container, key).await?,
            None => false,
        };
        if !claimed {
            container.create(lifetime).await?;
        }
        if let (Some(pool), Some((key, recipe))) = (&self.pool, warm) {
            pool.want(key, recipe);
        }
        Ok(())
    }

    /// Makes a ready member of settings `key` the session's container. `false` when there
    /// is none, or it could not be made the session's before anything of the session ran
    /// in it (it is then removed, the clone left where it was).
    async fn claim_member(&self, container: &SessionContainer<'_>, key: &PoolKey) -> Result<bool> {
        let Some(pool) = &self.pool else {
            return Ok(false);
        };
        let Some(member) = pool.take(key) else {
            return Ok(false);
        };
        let record = container.record;
        let name = record.container_id.clone();
        if let Err(err) = self.runtime.rename(&member.name, &name).await {
            tracing::warn!("warm pool: member '{}' not claimed: {err}", member.name);
            pool.discard(&member).await;
            return Ok(false);
        }
        // One stopped since it was made (the engine restarted, someone stopped it) is no
        // ready container.
        let running = self.runtime.inspect(&name).await;
        if !running.is_ok_and(|info| info.state == ContainerState::Running) {
            tracing::warn!("warm pool: member '{}' is not running", member.name);
            pool.discard(&Member { name, ..member }).await;
            return Ok(false);
        }
        if self.runtime.uses_agent() {
            crate::agent::move_agent(container.engine, &member.id, &name);
        }
        crate::egress::move_relay(container.engine, &member.name, &name);
        let (clone, folder) = (PathBuf::from(&record.clone_path), member.folder.clone());
        let placed = tokio::task::spawn_blocking(move || place_clone(&clone, &folder))
            .await
            .map_err(blocking_error)?;
        if let Err(err) = placed {
            tracing::warn!("warm pool: member '{}' not claimed: {err}", member.name);
            pool.discard(&Member { name, ..member }).await;
            return Ok(false);
        }
        let initialised = async {
            self.attach_relay(record).await?;
            container.initialise().await
        }
        .await;
        if let Err(err) = initialised {
            // As for a new container: none left behind, the clone (the session's work) stays.
            let _ = self.runtime.remove(&name).await;
            return Err(err);
        }
        Ok(true)
    }

    /// The warm pool as it is now; `None` without one.
    pub fn pool_status(&self) -> Option<PoolStatus> {
        self.pool.as_ref().map(|pool| pool.status())
    }

    /// Once the pool is full for the settings of the latest session (or cannot be filled
    /// now: its status says why); rejects with a member's failure meanwhile.
    pub async fn pool_ready(&self) -> Result<Option<PoolStatus>> {
        match &self.pool {
            Some(pool) => pool.ready().await.map(Some),
            None => Ok(None),
        }
    }
}
