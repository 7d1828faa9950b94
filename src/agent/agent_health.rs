//! Whether an agent connection still works, and why not: it closes when the agent's output
//! ends, when the agent breaks the protocol, or when it stops answering. A watchdog asks a
//! silent agent (`Ping`) while requests are open; an agent that answers nothing at all for
//! `ANSWER_WAIT` after that (a frozen container, a replaced agent) is given up, so every
//! call on it settles. Why a connection failed is kept for the pool, which takes repeated
//! failures as a reason to use the engine path.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use container_isolation_agent::protocol::{encode, Message, CONTROL};
use tokio::sync::{mpsc, Notify};

use super::agent_routes::Routes;

/// Silence, while requests are open, after which the agent is asked whether it lives.
const SILENCE: Duration = Duration::from_secs(5);
/// How long an asked agent may take to say anything.
const ANSWER_WAIT: Duration = Duration::from_secs(10);
const LOOK_EVERY: Duration = Duration::from_millis(500);

pub struct Health {
    closed: AtomicBool,
    failure: Mutex<Option<String>>,
    last_frame: Mutex<Instant>,
    give_up: Notify,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            closed: AtomicBool::new(false),
            failure: Mutex::new(None),
            last_frame: Mutex::new(Instant::now()),
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

    /// Resolves once `fail` has been called.
    pub async fn given_up(&self) {
        self.give_up.notified().await
    }

    pub fn heard(&self) {
        *self.last_frame.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn silence(&self) -> Duration {
        self.last_frame
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
    }
}

/// Pings a silent agent while requests are open; fails the connection when the agent
/// answers nothing. Ends with the connection.
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
        let silence = health.silence();
        if routes.pending() == 0 || silence < SILENCE {
            asked = None;
            continue;
        }
        match asked {
            None => {
                asked = Some(Instant::now());
                let _ = control.send(encode(CONTROL, &Message::Ping));
            }
            Some(at) if at.elapsed() >= ANSWER_WAIT => {
                health.fail(format!(
                    "answered nothing for {} s with {} requests open (the container may be paused or frozen)",
                    silence.as_secs(),
                    routes.pending()
                ));
                return;
            }
            Some(_) => {}
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
