//! Whether an agent connection still works, and why not: it closes when the agent's output
//! ends, when the agent breaks the protocol, or when it stops answering. While requests are
//! open a watchdog asks the agent (`Ping`) every `ASK_EVERY`; one that does not answer
//! within `ANSWER_WAIT` (a frozen container; a replaced agent that floods but no longer
//! reads) is given up, so every call on it settles. Only a `Pong` counts as an answer:
//! frames for other requests say nothing about this one. Why a connection failed is kept
//! for the pool, which takes repeated failures as a reason to use the engine path.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use container_isolation_agent::protocol::{encode, Message, CONTROL};
use tokio::sync::{mpsc, Notify};

use super::agent_routes::Routes;

/// How often the agent is asked whether it still answers, while requests are open.
const ASK_EVERY: Duration = Duration::from_secs(5);
/// How long an asked agent may take to say anything.
const ANSWER_WAIT: Duration = Duration::from_secs(10);
const LOOK_EVERY: Duration = Duration::from_millis(500);

pub struct Health {
    closed: AtomicBool,
    failure: Mutex<Option<String>>,
    last_pong: Mutex<Instant>,
    give_up: Notify,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            closed: AtomicBool::new(false),
            failure: Mutex::new(None),
            last_pong: Mutex::new(Instant::now()),
            give_up: Notify::new(),
        }
    }
}

impl Health {
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Why the connection failed, if it did (it may also have ended normally).
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Records why the connection fails (the first reason stays) and ends its reader.
    pub fn fail(&self, why: impl Into<String>) {
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if failure.is_none() {
            *failure = Some(why.into());
        }
        drop(failure);
        self.give_up.notify_one();
    }

    /// Ends the reader without recording a failure.
    pub fn end(&self) {
        self.give_up.notify_one();
    }

    /// Resolves once `fail` or `end` has been called.
    pub async fn given_up(&self) {
        self.give_up.notified().await
    }

    /// The agent answered a `Ping`.
    pub fn answered(&self) {
        *self.last_pong.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn last_answer(&self) -> Instant {
        *self.last_pong.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Asks the agent every `ASK_EVERY` while requests are open; fails the connection when an
/// ask goes unanswered for `ANSWER_WAIT`. Ends with the connection.
pub async fn watch(
    health: Weak<Health>,
    routes: Weak<Routes>,
    control: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut asked: Option<Instant> = None;
    loop {
        tokio::time::sleep(LOOK_EVERY).await;
        let (Some(health), Some(routes)) = (health.upgrade(), routes.upgrade()) else {
            return;
        };
        if health.is_closed() {
            return;
        }
        if asked.is_some_and(|at| health.last_answer() >= at) {
            asked = None;
        }
        match asked {
            Some(at) if at.elapsed() >= ANSWER_WAIT => {
                health.fail(format!(
                    "answered nothing for {} s with {} requests open (the container may be paused or frozen, or its agent replaced)",
                    at.elapsed().as_secs(),
                    routes.pending()
                ));
                return;
            }
            Some(_) => {}
            None if routes.pending() > 0 && health.last_answer().elapsed() >= ASK_EVERY => {
                asked = Some(Instant::now());
                let _ = control.send(encode(CONTROL, &Message::Ping));
            }
            None => {}
        }
    }
}

/// Starts the watchdog of a connection.
pub fn start_watch(
    health: &Arc<Health>,
    routes: &Arc<Routes>,
    control: mpsc::UnboundedSender<Vec<u8>>,
) {
    tokio::spawn(watch(
        Arc::downgrade(health),
        Arc::downgrade(routes),
        control,
    ));
}
