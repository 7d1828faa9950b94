//! `WarmPool`: containers made ahead of the sessions that claim them, for the settings of
//! the latest session (new settings retire the members of the old), refilled in the
//! background. A member is taken by one claim only, under the pool's lock.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use super::member_factory::MemberFactory;
use super::pool_key::PoolKey;
use super::pool_options::PoolOptions;
use super::pool_state::{Member, PoolStatus, State};
use super::refill::{refill, Shared};
use crate::error::{Error, ErrorCode, Result};

pub struct WarmPool<F: MemberFactory> {
    shared: Arc<Shared<F>>,
}

/// While one is held, the pool makes no member: a session is being created.
pub struct Creating<F: MemberFactory> {
    shared: Arc<Shared<F>>,
}

impl<F: MemberFactory> Drop for Creating<F> {
    fn drop(&mut self) {
        self.shared.state().creates -= 1;
        self.shared.changed.notify_waiters();
    }
}

impl<F: MemberFactory> WarmPool<F> {
    /// `base_tag` marks the member names of `base_dir`'s pool.
    pub fn new(options: PoolOptions, base_dir: &Path, base_tag: &str, factory: F) -> Self {
        WarmPool {
            shared: Arc::new(Shared {
                options,
                base_dir: base_dir.to_path_buf(),
                base_tag: base_tag.to_string(),
                factory,
                state: Mutex::new(State::new(options.size)),
                changed: Arc::new(Notify::new()),
            }),
        }
    }

    pub fn status(&self) -> PoolStatus {
        self.shared.state().status()
    }

    /// Pauses the refill until the guard is dropped.
    pub fn creating(&self) -> Creating<F> {
        self.shared.state().creates += 1;
        Creating {
            shared: self.shared.clone(),
        }
    }

    /// A ready member made for settings `key`, if there is one: this caller's alone.
    pub fn take(&self, key: &PoolKey) -> Option<Member> {
        let member = self.shared.state().take(key);
        if member.is_some() {
            self.shared.changed.notify_waiters();
        }
        member
    }

    /// Makes members for settings `key` from now on (the members of other settings retire),
    /// and starts the refill if it was not running. Called from within the runtime.
    pub fn want(&self, key: PoolKey, recipe: F::Recipe) {
        let start = {
            let mut state = self.shared.state();
            state.want(key, recipe);
            !std::mem::replace(&mut state.running, true)
        };
        if start {
            let pool = Arc::downgrade(&self.shared);
            tokio::spawn(refill(pool, self.shared.changed.clone()));
        }
        self.shared.changed.notify_waiters();
    }

    /// Removes a member a claim took and could not use.
    pub async fn discard(&self, member: &Member) {
        self.shared.discard(member).await
    }

    /// Once the pool holds `size` ready members for its settings (at once when it has no
    /// settings yet, or while the host cannot spare a member: the status says why); a
    /// member failing to be made meanwhile rejects with that failure.
    pub async fn ready(&self) -> Result<PoolStatus> {
        let errors_before = self.shared.state().errors;
        loop {
            let notified = self.shared.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = self.shared.state();
                if state.errors > errors_before {
                    return Err(state.last_error.clone().unwrap_or_else(|| {
                        Error::new(ErrorCode::EngineError, "a warm pool member failed")
                    }));
                }
                if state.settled() {
                    return Ok(state.status());
                }
            }
            notified.await;
        }
    }
}

impl<F: MemberFactory> Drop for WarmPool<F> {
    /// The refill ends; the members are removed where a runtime is at hand, else by the
    /// exit hooks, the watchdog or `reapOrphans` (they live as long as this process).
    fn drop(&mut self) {
        let members = self.shared.state().drain();
        self.shared.changed.notify_waiters();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let shared = self.shared.clone();
        runtime.spawn(async move {
            for member in members {
                shared.discard(&member).await;
            }
        });
    }
}

/// The status of a pool a session layer may have: `None` without one.
pub fn status_of<F: MemberFactory>(pool: Option<&WarmPool<F>>) -> Option<PoolStatus> {
    pool.map(WarmPool::status)
}

/// Once a pool a session layer may have is full for the settings of the latest session (or
/// cannot be filled now: its status says why); rejects with a member's failure meanwhile.
pub async fn ready_of<F: MemberFactory>(pool: Option<&WarmPool<F>>) -> Result<Option<PoolStatus>> {
    match pool {
        Some(pool) => pool.ready().await.map(Some),
        None => Ok(None),
    }
}
