//! A new session's container from the warm pool: a ready member made for the same settings
//! is claimed (taken under the pool's lock, then renamed to the session's container name,
//! which the engine gives to one container only), the session's clone moved into the
//! member's folder (bind storage) or uploaded into the member's volume (volume storage), its
//! relay given the session's policy and the lifecycle commands of a new container run.
//! Without a member, the container is made as without a pool; either way the pool then
//! makes members for these settings.

use std::path::PathBuf;

use super::pool_members::{recipe_for, SessionMembers};
use super::session_container::SessionContainer;
use super::workspace_storage::Storage;
use super::workspaces::{blocking_error, Workspaces};
use crate::container_runtime::ContainerRuntime;
use crate::error::Result;
use crate::runtime::{ContainerState, Lifetime};
use crate::warm_pool::{place_clone, ready_of, status_of, Creating, Member, PoolKey, PoolStatus};
use crate::workspace_volume::{remove_member_volume, volume_name};

/// What a claim gave the session.
#[derive(PartialEq, Eq)]
enum Claimed {
    Not,
    Bind,
    /// The member's volume, filled with the session's clone.
    Volume(String),
}

impl Workspaces {
    /// While held, the pool makes no member.
    pub(super) fn pool_pause(&self) -> Option<Creating<SessionMembers>> {
        self.pool.as_ref().map(|pool| pool.creating())
    }

    /// The session's new container: a claimed member, else made; the pool then wants
    /// members for its settings. `Some(volume)` when the session's repository is in a
    /// claimed member's volume, which its record must name.
    pub(super) async fn create_or_claim(
        &self,
        container: &SessionContainer<'_>,
        lifetime: Lifetime,
    ) -> Result<Option<String>> {
        let warm = match &self.pool {
            // A compose session's container joins its own set: no member can be it.
            Some(_) if container.record.compose.is_some() => None,
            Some(_) => recipe_for(container, lifetime).await.unwrap_or_else(|err| {
                tracing::warn!("warm pool: settings not pooled: {err}");
                None
            }),
            None => None,
        };
        let claimed = match &warm {
            Some((key, _)) => self.claim_member(container, key).await?,
            None => Claimed::Not,
        };
        if claimed == Claimed::Not {
            container.create(lifetime).await?;
        }
        if let (Some(pool), Some((key, recipe))) = (&self.pool, warm) {
            pool.want(key, recipe);
        }
        Ok(match claimed {
            Claimed::Volume(volume) => Some(volume),
            _ => None,
        })
    }

    /// Makes a ready member of settings `key` the session's container: `Claimed::Not` when
    /// there is none, or it could not be made the session's before anything of the session
    /// ran in it (it is then removed, the clone left where it was).
    async fn claim_member(
        &self,
        container: &SessionContainer<'_>,
        key: &PoolKey,
    ) -> Result<Claimed> {
        let Some(pool) = &self.pool else {
            return Ok(Claimed::Not);
        };
        let Some(member) = pool.take(key) else {
            return Ok(Claimed::Not);
        };
        let record = container.record;
        let name = record.container_id.clone();
        if let Err(err) = self.runtime.rename(&member.name, &name).await {
            tracing::warn!("warm pool: member '{}' not claimed: {err}", member.name);
            pool.discard(&member).await;
            return Ok(Claimed::Not);
        }
        let engine = container.engine;
        // From here the member bears the session's name: given up, it goes by that name, and
        // its volume (named after the member) with it.
        let give_up = |why: String| {
            let renamed = Member {
                name: name.clone(),
                ..member.clone()
            };
            let member = member.name.clone();
            async move {
                tracing::warn!("warm pool: member '{member}' not claimed: {why}");
                pool.discard(&renamed).await;
                remove_member_volume(engine, &member).await;
                Ok(Claimed::Not)
            }
        };
        // One stopped since it was made (the engine restarted, someone stopped it) is no
        // ready container.
        let running = self.runtime.inspect(&name).await;
        if !running.is_ok_and(|info| info.state == ContainerState::Running) {
            return give_up("it is not running".into()).await;
        }
        if self.runtime.uses_agent() {
            crate::agent::move_agent(engine, &member.id, &name);
        }
        crate::egress::move_relay(engine, &member.name, &name);
        let claimed = match record.storage {
            Storage::Volume => {
                if let Err(err) = container.fill_volume().await {
                    return give_up(err.to_string()).await;
                }
                let _ = std::fs::remove_dir(&member.folder);
                Claimed::Volume(volume_name(&member.name))
            }
            Storage::Pod => return give_up("a pool member is not a Pod".into()).await,
            Storage::Bind => {
                let (clone, folder) = (PathBuf::from(&record.clone_path), member.folder.clone());
                let placed = tokio::task::spawn_blocking(move || place_clone(&clone, &folder))
                    .await
                    .map_err(blocking_error)?;
                if let Err(err) = placed {
                    return give_up(err.to_string()).await;
                }
                Claimed::Bind
            }
        };
        let initialised = async {
            self.attach_relay(record).await?;
            container.initialise().await
        }
        .await;
        if let Err(err) = initialised {
            // As for a new container: none left behind, the clone (the session's work) stays.
            let _ = self.runtime.remove(&name).await;
            remove_member_volume(engine, &member.name).await;
            return Err(err);
        }
        Ok(claimed)
    }

    /// The warm pool as it is now; `None` without one.
    pub fn pool_status(&self) -> Option<PoolStatus> {
        status_of(self.pool.as_ref())
    }

    /// Once the pool is full for the settings of the latest session (or cannot be filled
    /// now: its status says why); rejects with a member's failure meanwhile.
    pub async fn pool_ready(&self) -> Result<Option<PoolStatus>> {
        ready_of(self.pool.as_ref()).await
    }
}
