//! What ends a command's run early — `terminate()` or the shell's timeout — and the bound
//! on how long ending it may take: whatever the container does (frozen, flooding, silent)
//! and whatever the engine does, a stopped run settles within `SETTLE` of its stop.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::{sleep, sleep_until, Instant};

use super::run_end::Ending;

/// From the stop to the settled result, at most (the contract's bound is 2 s).
pub const SETTLE: Duration = Duration::from_millis(1500);

/// `terminate()`: fired once, seen by every waiter, also by one that starts waiting later.
#[derive(Default)]
pub struct StopSignal {
    fired: AtomicBool,
    notify: Notify,
}

impl StopSignal {
    pub fn fire(&self) {
        self.fired.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    pub fn is_fired(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }

    pub async fn fired(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_fired() {
                return;
            }
            notified.await;
        }
    }
}

/// What ends a run early: `terminate()` and the shell's timeout.
pub struct Stop<'a> {
    pub terminate: &'a StopSignal,
    pub deadline: Instant,
}

impl Stop<'_> {
    /// Resolves when the run is to end, with why.
    pub async fn stopped(&self) -> Ending {
        tokio::select! {
            biased;
            _ = self.terminate.fired() => Ending::Terminated,
            _ = sleep_until(self.deadline) => Ending::TimedOut,
        }
    }

    /// Why the run was stopped, once it was.
    pub fn why(&self) -> Ending {
        match self.terminate.is_fired() {
            true => Ending::Terminated,
            false => Ending::TimedOut,
        }
    }

    /// `work`'s result, or `None` when it has not settled `SETTLE` after the stop.
    pub async fn settle<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        tokio::select! {
            biased;
            done = work => Some(done),
            _ = async { self.stopped().await; sleep(SETTLE).await } => None,
        }
    }
}
