//! A warm pool of session Pods: Pods of the latest session's settings made ahead (owned by
//! the host Lease, so they go with this process; their agent and relay started), one claimed
//! by a new session with the same settings — relabelled as the session's (a Pod's name cannot
//! change, so the session keeps the member's), given the clone, its relay handed the
//! session's policy and its creation steps run. A member that cannot be made the session's before anything of the session ran
//! in it is removed and the Pod made as without a pool.

use std::path::Path;
use std::sync::Arc;

use super::pod_sessions::PodWorkspaces;
use super::pod_settings::pod_config;
use crate::container_runtime::{ContainerConfig, ContainerRuntime};
use crate::egress::Egress;
use crate::error::Result;
use crate::kubernetes::{pod_user, KubernetesRuntime};
use crate::progress::{Phase, Progress};
use crate::runtime::Lifetime;
use crate::warm_pool::{ready_of, status_of, Creating, Member, MemberFactory, PoolKey, PoolStatus};
use crate::workspace::WorkspaceRecord;

/// The label that marks a Pod as a pool member, with its settings' key.
const POOL_LABEL: &str = "dev.container-isolation.pool";

pub struct PodMembers {
    pub(super) runtime: Arc<KubernetesRuntime>,
}

/// What a member is made from: its Pod's config, and the egress whose relay it runs (the
/// claiming session's policy replaces this one's; the bounds are the same).
pub struct PodRecipe {
    config: ContainerConfig,
    egress: Option<Egress>,
}

impl PodMembers {
    /// The member's agent and relay, started now rather than at the claim.
    async fn warm(&self, name: &str, egress: Option<&Egress>) -> Result<()> {
        pod_user(&self.runtime, name, None).await?;
        if let Some(egress) = egress {
            self.runtime.attach_relay(name, name, egress).await?;
        }
        Ok(())
    }
}

impl MemberFactory for PodMembers {
    type Recipe = PodRecipe;

    async fn make(
        &self,
        recipe: &PodRecipe,
        key: &PoolKey,
        name: &str,
        _folder: &Path,
    ) -> Result<String> {
        let mut config = recipe.config.clone();
        config.name = Some(name.to_string());
        config.lifetime = Lifetime::Process;
        config
            .labels
            .insert(POOL_LABEL.to_string(), key.as_str().to_string());
        self.runtime.create(config).await?;
        if let Err(err) = self.warm(name, recipe.egress.as_ref()).await {
            let _ = self.runtime.remove(name).await;
            return Err(err);
        }
        Ok(name.to_string())
    }

    async fn remove(&self, name: &str) {
        let _ = self.runtime.remove(name).await;
    }

    /// A Pod's memory is its node's, not this host's.
    fn memory(&self, _recipe: &PodRecipe) -> Option<u64> {
        None
    }

    fn on_this_host(&self) -> bool {
        false
    }
}

/// The Pod settings a session's record gives, as a pool member is made from them, and
/// their key: every field of the Pod's config but its name, and the relay's bounds.
fn recipe_of(config: ContainerConfig, egress: Option<Egress>) -> (PoolKey, PodRecipe) {
    let config = ContainerConfig {
        name: None,
        lifetime: Lifetime::Process,
        ..config
    };
    let bounds = egress.as_ref().map(|e| (e.max_connections(), e.idle()));
    let key = PoolKey::of(&[&format!("{config:?}"), &format!("{bounds:?}")]);
    (key, PodRecipe { config, egress })
}

impl PodWorkspaces {
    /// While held, the pool makes no member.
    pub(super) fn pool_pause(&self) -> Option<Creating<PodMembers>> {
        self.pool.as_ref().map(|pool| pool.creating())
    }

    /// The session's Pod, brought up (a claimed member, else made), with the pool then
    /// wanting members of its settings. The record names the Pod it got.
    pub(super) async fn bring_up_pooled(
        &self,
        record: &mut WorkspaceRecord,
        progress: &Progress,
    ) -> Result<()> {
        let Some(pool) = self.pool.as_ref().filter(|_| record.compose.is_none()) else {
            return self.bring_up(record, progress).await;
        };
        let config = pod_config(record, self.pod_variables(record));
        let (key, recipe) = recipe_of(config, self.egress_of(record));
        let claimed = match pool.take(&key) {
            Some(member) => self.claim(record, member, progress).await?,
            None => false,
        };
        pool.want(key, recipe);
        if claimed {
            return Ok(());
        }
        self.bring_up(record, progress).await
    }

    /// Makes `member` the session's Pod; false (the member removed, the record as it was)
    /// where it could not be before anything of the session ran in it.
    async fn claim(
        &self,
        record: &mut WorkspaceRecord,
        member: Member,
        progress: &Progress,
    ) -> Result<bool> {
        let own_name = std::mem::replace(&mut record.container_id, member.name.clone());
        let claiming = format!("claiming Pod {} from the warm pool", member.name);
        progress.step(Phase::Create, &claiming);
        // The relabelling, the copy and the relay are independent: at once.
        let config = pod_config(record, self.pod_variables(record));
        let relabelled = self.runtime.claim_pod(&member.name, &config, POOL_LABEL);
        progress.step(Phase::Create, "copying the repository into the Pod");
        let (relabelled, copied, relayed) = tokio::join!(
            relabelled,
            self.copy_clone_in(record),
            self.attach_relay(record)
        );
        if let Err(err) = relabelled.and(copied) {
            tracing::warn!("warm pool: member '{}' not claimed: {err}", member.name);
            if let Some(pool) = &self.pool {
                pool.discard(&member).await;
            }
            record.container_id = own_name;
            return Ok(false);
        }
        relayed?;
        self.run_creation_steps(record, progress).await?;
        Ok(true)
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
