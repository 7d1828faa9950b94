//! Threads kept for work that leaves a thread as it found it (a relay stream's two
//! directions, a dial): a thread whose work is done waits a while for the next piece
//! instead of ending, so a new connection costs one wake-up, not a thread's making and
//! ending on its way. Only work that never changes the thread's credentials, signal mask
//! or other per-thread state may run here. Each kept thread counts against the container's
//! pids limit: few are kept (`IDLE_MAX`), not for long (`IDLE_WAIT`), and when none is
//! waiting a thread is made as `detached::spawn` makes it (`EAGAIN` at the limit).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use super::detached;

/// Threads kept waiting at most.
const IDLE_MAX: usize = 8;
/// How long a kept thread waits for work before it ends.
const IDLE_WAIT: Duration = Duration::from_secs(10);

type Work = Box<dyn FnOnce() + Send>;

struct Pool {
    state: Mutex<State>,
    more: Condvar,
}

#[derive(Default)]
struct State {
    queued: VecDeque<Work>,
    /// Threads waiting for work (each queued piece has one of its own).
    idle: usize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State::default()),
        more: Condvar::new(),
    })
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs `work` on a kept thread, else on a new one (which is kept afterwards).
pub fn run(work: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    let pool = pool();
    let mut state = pool.lock();
    if state.idle > state.queued.len() {
        state.queued.push_back(Box::new(work));
        drop(state);
        pool.more.notify_one();
        return Ok(());
    }
    drop(state);
    detached::spawn(move || {
        work();
        keep(pool);
    })
}

/// A thread's life after its first piece of work: the next queued one, or a wait for it.
fn keep(pool: &'static Pool) {
    let mut state = pool.lock();
    loop {
        if let Some(work) = state.queued.pop_front() {
            drop(state);
            work();
            state = pool.lock();
            continue;
        }
        if state.idle >= IDLE_MAX {
            return;
        }
        state.idle += 1;
        let (woken, wait) = pool
            .more
            .wait_timeout(state, IDLE_WAIT)
            .unwrap_or_else(|e| e.into_inner());
        state = woken;
        state.idle -= 1;
        if wait.timed_out() && state.queued.is_empty() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::channel;

    #[test]
    fn every_piece_runs_and_threads_are_reused() {
        let (done, finished) = channel();
        let ids = std::sync::Arc::new(Mutex::new(std::collections::HashSet::new()));
        for round in 0..5 {
            for _ in 0..4 {
                let (done, ids) = (done.clone(), ids.clone());
                run(move || {
                    ids.lock().unwrap().insert(std::thread::current().id());
                    std::thread::sleep(Duration::from_millis(5));
                    done.send(round).unwrap();
                })
                .unwrap();
            }
            for _ in 0..4 {
                finished.recv_timeout(Duration::from_secs(5)).unwrap();
            }
            // Let the four go back to waiting before the next round.
            while pool().lock().idle < 4 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        assert_eq!(ids.lock().unwrap().len(), 4);
    }
}
