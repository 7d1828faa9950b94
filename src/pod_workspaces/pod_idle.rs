//! Idle stopping for sessions on a cluster (`Workspaces { idleTimeoutMs }`), as on the
//! engines: a session unused for the timeout has its work read back into the host clone and
//! its Pod stopped; the next file operation, command or git call starts it again, given the
//! clone.

use std::sync::{Arc, Weak};

use super::pod_sessions::PodWorkspaces;
use crate::error::Result;
use crate::runtime::ContainerUse;
use crate::workspace::{IdleOwner, SessionCall, SessionUseHook};

impl PodWorkspaces {
    /// The session counts as used now, where idle sessions stop (their stopper running).
    pub(super) fn mark_used(self: &Arc<Self>, session_id: &str) -> Option<Weak<dyn IdleOwner>> {
        let idle = self.idle.as_ref()?;
        idle.touch(session_id);
        let owner: Weak<dyn IdleOwner> = Arc::downgrade(self) as Weak<PodWorkspaces>;
        idle.ensure_running(owner.clone());
        Some(owner)
    }

    /// What a session's FileIO, Shell and git client tell of each use, where idle sessions
    /// stop; the session counts as used now.
    pub(super) fn use_hook(self: &Arc<Self>, session_id: &str) -> Option<Arc<dyn ContainerUse>> {
        let owner = self.mark_used(session_id)?;
        let tracker = self.idle.clone()?;
        Some(Arc::new(SessionUseHook {
            tracker,
            owner,
            session: session_id.to_string(),
        }))
    }

    /// The session's Pod running again with its workspace, under the session's lock.
    async fn start_again(&self, session_id: &str) -> Result<()> {
        let record = self.required(session_id)?;
        let lock = self.lock_for(session_id);
        let _guard = lock.lock().await;
        self.ensure_running(&record).await
    }
}

impl IdleOwner for PodWorkspaces {
    fn stop_idle<'a>(&'a self, session: &'a str) -> SessionCall<'a> {
        Box::pin(self.stop(session))
    }

    fn start_again<'a>(&'a self, session: &'a str) -> SessionCall<'a> {
        Box::pin(PodWorkspaces::start_again(self, session))
    }
}
