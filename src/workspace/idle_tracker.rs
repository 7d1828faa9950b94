//! Idle stopping for `Workspaces { idleTimeoutMs }`: every FileIO/Shell use of a session
//! is tracked; a session unused (and with nothing in flight) for the timeout has its
//! container stopped — not removed — and the next use starts it again first. The tracker
//! knows its owner only as an `IdleOwner`.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::runtime::{ContainerUse, UseFuture, UseGuard};

/// A call of the tracker's owner about one session.
pub type SessionCall<'a> = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

/// What the tracker asks of whoever owns the sessions (`Workspaces`), held weakly: the
/// tracker's task ends when its owner goes.
pub trait IdleOwner: Send + Sync + 'static {
    /// Stops an idle session's container (unless its settings keep it running).
    fn stop_idle<'a>(&'a self, session: &'a str) -> SessionCall<'a>;
    /// Starts a session's container again before a use.
    fn start_again<'a>(&'a self, session: &'a str) -> SessionCall<'a>;
}

#[derive(Debug)]
struct SessionUse {
    last_used: Instant,
    in_flight: usize,
    idle_stopped: bool,
}

impl SessionUse {
    /// Running, with nothing in flight, and unused for `timeout`.
    fn is_idle(&self, timeout: Duration) -> bool {
        !self.idle_stopped && self.in_flight == 0 && self.last_used.elapsed() >= timeout
    }
}

pub struct IdleTracker {
    timeout: Duration,
    sessions: Mutex<HashMap<String, SessionUse>>,
    started: std::sync::Once,
}

impl IdleTracker {
    pub fn new(timeout: Duration) -> IdleTracker {
        IdleTracker {
            timeout,
            sessions: Mutex::new(HashMap::new()),
            started: std::sync::Once::new(),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, SessionUse>) -> T) -> T {
        f(&mut self.sessions.lock().unwrap_or_else(|e| e.into_inner()))
    }

    pub fn touch(&self, session: &str) {
        self.with(|all| {
            let entry = all.entry(session.to_string()).or_insert(SessionUse {
                last_used: Instant::now(),
                in_flight: 0,
                idle_stopped: false,
            });
            entry.last_used = Instant::now();
            entry.idle_stopped = false;
        });
    }

    pub fn forget(&self, session: &str) {
        self.with(|all| all.remove(session));
    }

    /// Starts the stopper task once (it ends when its owner is dropped).
    pub fn ensure_running(self: &Arc<Self>, owner: Weak<dyn IdleOwner>) {
        let tracker = self.clone();
        self.started.call_once(|| {
            let interval =
                (tracker.timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(interval).await;
                    let Some(owner) = owner.upgrade() else {
                        return;
                    };
                    for session in tracker.idle_sessions() {
                        // Marked first, so that a use arriving while the stop is under way
                        // starts the container again (after the stop, under the same lock).
                        if !tracker.claim_idle(&session) {
                            continue;
                        }
                        if owner.stop_idle(&session).await.is_err() {
                            tracker.set_idle_stopped(&session, false);
                        }
                    }
                }
            });
        });
    }

    /// Marks the session idle-stopped if it still is idle (no use began since it was
    /// listed); a use that begins afterwards sees the mark and starts the container again.
    fn claim_idle(&self, session: &str) -> bool {
        self.with(|all| match all.get_mut(session) {
            Some(s) if s.is_idle(self.timeout) => {
                s.idle_stopped = true;
                true
            }
            _ => false,
        })
    }

    fn set_idle_stopped(&self, session: &str, stopped: bool) {
        self.with(|all| {
            if let Some(s) = all.get_mut(session) {
                s.idle_stopped = stopped;
            }
        });
    }

    fn idle_sessions(&self) -> Vec<String> {
        self.with(|all| {
            all.iter()
                .filter(|(_, s)| s.is_idle(self.timeout))
                .map(|(id, _)| id.clone())
                .collect()
        })
    }
}

/// The hook handed to a session's FileIO and Shell.
pub struct SessionUseHook {
    pub tracker: Arc<IdleTracker>,
    pub owner: Weak<dyn IdleOwner>,
    pub session: String,
}

struct EndOfUse {
    tracker: Arc<IdleTracker>,
    session: String,
}

impl Drop for EndOfUse {
    fn drop(&mut self) {
        self.tracker.with(|all| {
            if let Some(s) = all.get_mut(&self.session) {
                s.in_flight = s.in_flight.saturating_sub(1);
                s.last_used = Instant::now();
            }
        });
    }
}

impl SessionUseHook {
    async fn begin_use(&self) -> Result<UseGuard> {
        let was_stopped = self.tracker.with(|all| {
            let entry = all.entry(self.session.clone()).or_insert(SessionUse {
                last_used: Instant::now(),
                in_flight: 0,
                idle_stopped: false,
            });
            entry.in_flight += 1;
            entry.last_used = Instant::now();
            std::mem::replace(&mut entry.idle_stopped, false)
        });
        let end = EndOfUse {
            tracker: self.tracker.clone(),
            session: self.session.clone(),
        };
        if was_stopped {
            if let Some(owner) = self.owner.upgrade() {
                owner.start_again(&self.session).await?;
            }
        }
        Ok(UseGuard::new(end))
    }
}

impl ContainerUse for SessionUseHook {
    fn begin(&self) -> UseFuture<'_> {
        Box::pin(self.begin_use())
    }
}
