//! The refill: one background task per pool making its members one at a time and removing
//! the retired ones, waiting while the pool is full, a session is being created in this
//! process, or the host cannot spare a member, and resting after each member it made. It
//! holds the pool weakly: when the pool goes, it ends.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::host_headroom::lacking;
use super::member_factory::MemberFactory;
use super::pool_folder::{make_folder, remove_folder, sweep_links};
use super::pool_key::PoolKey;
use super::pool_options::PoolOptions;
use super::pool_state::{Job, Member, State};
use crate::error::{Error, ErrorCode};
use crate::runtime::pool_member::member_name;

/// A member costs the engine a burst of work (create, start, the agent): after each, the
/// refill rests this many times as long as the member took, so that it holds the machine
/// at most a third of the time and the sessions running beside it keep their pace.
const REST_FACTOR: u32 = 2;
/// The longest rest, whatever a member took.
const MAX_REST: Duration = Duration::from_secs(10);

pub struct Shared<F: MemberFactory> {
    pub options: PoolOptions,
    pub base_dir: PathBuf,
    /// Marks this base directory's member names.
    pub base_tag: String,
    pub factory: F,
    pub state: Mutex<State<F::Recipe>>,
    /// Told of every change of `state`.
    pub changed: Arc<Notify>,
}

impl<F: MemberFactory> Shared<F> {
    pub fn state(&self) -> MutexGuard<'_, State<F::Recipe>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Removes a member and its folder.
    pub async fn discard(&self, member: &Member) {
        self.factory.remove(&member.name).await;
        let folder = member.folder.clone();
        let _ = tokio::task::spawn_blocking(move || remove_folder(&folder)).await;
    }

    async fn make_one(&self, key: PoolKey, recipe: Arc<F::Recipe>) {
        let name = member_name(&self.base_tag);
        let (base, for_folder) = (self.base_dir.clone(), name.clone());
        let folder = tokio::task::spawn_blocking(move || make_folder(&base, &for_folder))
            .await
            .map_err(|e| e.to_string())
            .and_then(|made| made.map_err(|e| e.to_string()))
            .map_err(|e| {
                Error::new(
                    ErrorCode::Eacces,
                    format!("a warm pool member's folder could not be made: {e}"),
                )
            });
        let made = match folder {
            Ok(folder) => {
                let mut member = Member {
                    name,
                    id: String::new(),
                    folder,
                };
                match self
                    .factory
                    .make(&recipe, &key, &member.name, &member.folder)
                    .await
                {
                    Ok(id) => {
                        member.id = id;
                        Ok(member)
                    }
                    Err(err) => {
                        self.discard(&member).await;
                        Err(err)
                    }
                }
            }
            Err(err) => Err(err),
        };
        if let Err(err) = &made {
            tracing::warn!("warm pool: a member could not be made: {err}");
        }
        self.state().finished(&key, made);
        self.changed.notify_waiters();
    }
}

/// Runs until the pool is gone.
pub async fn refill<F: MemberFactory>(pool: Weak<Shared<F>>, changed: Arc<Notify>) {
    if let Some(shared) = pool.upgrade() {
        let base = shared.base_dir.clone();
        let _ = tokio::task::spawn_blocking(move || sweep_links(&base)).await;
    }
    loop {
        let notified = changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let Some(shared) = pool.upgrade() else {
            return;
        };
        let job = {
            let mut state = shared.state();
            let was_waiting = state.waiting_for_host.is_some();
            let factory = &shared.factory;
            let job = state.next_job(|recipe| {
                factory
                    .on_this_host()
                    .then(|| lacking(&shared.options, factory.memory(recipe)))
                    .flatten()
            });
            if state.waiting_for_host.is_some() != was_waiting {
                shared.changed.notify_waiters();
            }
            job
        };
        match job {
            Job::Retire(member) => shared.discard(&member).await,
            Job::Make(key, recipe) => {
                let started = Instant::now();
                shared.make_one(key, recipe).await;
                drop(shared);
                tokio::time::sleep((started.elapsed() * REST_FACTOR).min(MAX_REST)).await;
            }
            Job::Wait(limit) => {
                drop(shared);
                match limit {
                    Some(limit) => {
                        let _ = tokio::time::timeout(limit, notified).await;
                    }
                    None => notified.await,
                }
            }
        }
    }
}
