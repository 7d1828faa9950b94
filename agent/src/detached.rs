//! Threads made without panicking: at the container's pids limit (a fork bomb in the
//! session) a thread may not be had, and the agent must go on serving — above all the kill
//! that ends the bomb. Work that may run on the caller's thread does so; other work fails
//! with `EAGAIN`, which the caller reports.

use std::sync::{Arc, Mutex};

/// Runs `work` on a thread of its own; `EAGAIN` when none can be made.
pub fn spawn(work: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new().spawn(work).map(|_| ())
}

/// Runs `work` on a thread of its own, else here (it must not change the thread's
/// credentials, nor wait for anything the calling thread is to deliver).
pub fn spawn_or_here(work: impl FnOnce() + Send + 'static) {
    let slot = Arc::new(Mutex::new(Some(work)));
    let theirs = slot.clone();
    let spawned = spawn(move || {
        if let Some(work) = theirs.lock().unwrap_or_else(|e| e.into_inner()).take() {
            work()
        }
    });
    if spawned.is_err() {
        if let Some(work) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
            work()
        }
    }
}
