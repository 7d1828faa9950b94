//! What a pool holds and decides, under its lock: the settings it makes members for, its
//! ready members, the ones to retire, and what the refill does next.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::pool_key::PoolKey;
use crate::error::Error;

/// How long the refill waits before it looks at a busy host again.
pub const HOST_RECHECK: Duration = Duration::from_secs(2);
/// The longest wait after failed makes (it doubles from 1 s).
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// A member: its container's name and engine id, and its clone folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub id: String,
    pub folder: PathBuf,
}

/// A pool as `poolStatus()` reports it.
#[derive(Debug, Clone, Default)]
pub struct PoolStatus {
    pub size: u32,
    /// Members ready to be claimed.
    pub ready: u32,
    /// Whether a member is being made now.
    pub filling: bool,
    /// Members made, claimed and retired so far.
    pub made: u64,
    pub claimed: u64,
    pub retired: u64,
    /// Why no member is being made though the pool is not full: the host's rule.
    pub waiting_for_host: Option<String>,
    /// The last failure to make a member.
    pub last_error: Option<Error>,
}

/// What the refill does next.
pub enum Job<R> {
    Retire(Member),
    Make(PoolKey, Arc<R>),
    /// Wait for a change, at most this long.
    Wait(Option<Duration>),
}

pub struct State<R> {
    pub size: u32,
    pub wanted: Option<(PoolKey, Arc<R>)>,
    pub ready: VecDeque<Member>,
    pub retiring: Vec<Member>,
    pub filling: bool,
    /// Sessions being created in this process now: the refill waits for them.
    pub creates: usize,
    pub made: u64,
    pub claimed: u64,
    pub retired: u64,
    pub waiting_for_host: Option<String>,
    pub last_error: Option<Error>,
    /// Failed makes in all, and in a row since the last success.
    pub errors: u64,
    in_a_row: u32,
    retry_at: Option<Instant>,
    pub running: bool,
}

impl<R> State<R> {
    pub fn new(size: u32) -> State<R> {
        State {
            size,
            wanted: None,
            ready: VecDeque::new(),
            retiring: Vec::new(),
            filling: false,
            creates: 0,
            made: 0,
            claimed: 0,
            retired: 0,
            waiting_for_host: None,
            last_error: None,
            errors: 0,
            in_a_row: 0,
            retry_at: None,
            running: false,
        }
    }

    pub fn status(&self) -> PoolStatus {
        PoolStatus {
            size: self.size,
            ready: self.ready.len() as u32,
            filling: self.filling,
            made: self.made,
            claimed: self.claimed,
            retired: self.retired,
            waiting_for_host: self.waiting_for_host.clone(),
            last_error: self.last_error.clone(),
        }
    }

    fn wants(&self, key: &PoolKey) -> bool {
        self.wanted.as_ref().is_some_and(|(k, _)| k == key)
    }

    /// Makes members for `key` from now on; the ready members of other settings retire.
    /// Whether anything changed.
    pub fn want(&mut self, key: PoolKey, recipe: R) -> bool {
        if self.wants(&key) {
            return false;
        }
        let old: Vec<Member> = self.ready.drain(..).collect();
        self.retired += old.len() as u64;
        self.retiring.extend(old);
        self.wanted = Some((key, Arc::new(recipe)));
        self.in_a_row = 0;
        self.retry_at = None;
        true
    }

    /// A ready member for settings `key`, taken: no other claim can have it.
    pub fn take(&mut self, key: &PoolKey) -> Option<Member> {
        if !self.wants(key) {
            return None;
        }
        let member = self.ready.pop_front()?;
        self.claimed += 1;
        Some(member)
    }

    /// The refill's next step; `lacking` says why the host cannot spare a member now.
    pub fn next_job(&mut self, lacking: impl FnOnce(&R) -> Option<String>) -> Job<R> {
        if let Some(member) = self.retiring.pop() {
            return Job::Retire(member);
        }
        let Some((key, recipe)) = self.wanted.clone() else {
            return Job::Wait(None);
        };
        if self.ready.len() >= self.size as usize || self.creates > 0 {
            return Job::Wait(None);
        }
        if let Some(at) = self.retry_at {
            let now = Instant::now();
            if now < at {
                return Job::Wait(Some(at - now));
            }
        }
        self.waiting_for_host = lacking(&recipe);
        if self.waiting_for_host.is_some() {
            return Job::Wait(Some(HOST_RECHECK));
        }
        self.filling = true;
        Job::Make(key, recipe)
    }

    /// A make for `key` ended; a member made for settings no longer wanted retires.
    pub fn finished(&mut self, key: &PoolKey, outcome: Result<Member, Error>) {
        self.filling = false;
        match outcome {
            Ok(member) => {
                self.made += 1;
                self.in_a_row = 0;
                if self.wants(key) {
                    self.ready.push_back(member);
                } else {
                    self.retired += 1;
                    self.retiring.push(member);
                }
            }
            Err(err) => {
                self.errors += 1;
                self.in_a_row = self.in_a_row.saturating_add(1);
                let backoff = Duration::from_secs(1 << (self.in_a_row - 1).min(6));
                self.retry_at = Some(Instant::now() + backoff.min(MAX_BACKOFF));
                self.last_error = Some(err);
            }
        }
    }

    /// Whether `ready()` may answer: nothing to make for, the pool full with nothing left
    /// to retire, or the host unable to spare a member.
    pub fn settled(&self) -> bool {
        self.wanted.is_none()
            || (self.ready.len() >= self.size as usize && self.retiring.is_empty())
            || (self.waiting_for_host.is_some() && !self.filling)
    }

    /// Every member, taken out (the pool is going away).
    pub fn drain(&mut self) -> Vec<Member> {
        self.wanted = None;
        self.ready
            .drain(..)
            .chain(self.retiring.drain(..))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(n: u32) -> Member {
        Member {
            name: format!("wp-m{n}"),
            id: format!("id{n}"),
            folder: PathBuf::from(format!("/b/pool/wp-m{n}")),
        }
    }

    fn fill(state: &mut State<()>, key: &PoolKey, n: u32) {
        match state.next_job(|_| None) {
            Job::Make(k, _) => assert_eq!(&k, key),
            _ => panic!("expected a make"),
        }
        state.finished(key, Ok(member(n)));
    }

    #[test]
    fn a_full_pool_makes_nothing_and_a_claim_takes_each_member_once() {
        let mut state = State::new(2);
        let key = PoolKey::of(&["a"]);
        assert!(matches!(state.next_job(|_| None), Job::Wait(None)));
        assert!(state.want(key.clone(), ()));
        fill(&mut state, &key, 1);
        fill(&mut state, &key, 2);
        assert!(matches!(state.next_job(|_| None), Job::Wait(None)));
        assert!(state.settled());
        assert_eq!(state.take(&PoolKey::of(&["b"])), None);
        assert_eq!(state.take(&key), Some(member(1)));
        assert_eq!(state.take(&key), Some(member(2)));
        assert_eq!(state.take(&key), None);
        assert_eq!(state.claimed, 2);
        state.creates = 1;
        assert!(matches!(state.next_job(|_| None), Job::Wait(None)));
    }

    #[test]
    fn new_settings_retire_the_members_of_the_old() {
        let mut state = State::new(1);
        let (a, b) = (PoolKey::of(&["a"]), PoolKey::of(&["b"]));
        state.want(a.clone(), ());
        fill(&mut state, &a, 1);
        assert!(!state.want(a.clone(), ()));
        assert!(state.want(b.clone(), ()));
        assert!(!state.settled());
        assert!(matches!(state.next_job(|_| None), Job::Retire(m) if m == member(1)));
        assert_eq!(state.retired, 1);
        fill(&mut state, &b, 2);
        assert!(state.settled());
        // A member still being made for the old settings when they change retires too.
        let c = PoolKey::of(&["c"]);
        state.want(c.clone(), ());
        assert!(matches!(state.next_job(|_| None), Job::Retire(_)));
        assert!(matches!(state.next_job(|_| None), Job::Make(..)));
        state.want(a.clone(), ());
        state.finished(&c, Ok(member(3)));
        assert!(matches!(state.next_job(|_| None), Job::Retire(m) if m == member(3)));
    }

    #[test]
    fn a_busy_host_and_failures_hold_the_refill_back() {
        let mut state = State::new(1);
        let key = PoolKey::of(&["a"]);
        state.want(key.clone(), ());
        assert!(matches!(
            state.next_job(|_| Some("busy".into())),
            Job::Wait(Some(HOST_RECHECK))
        ));
        assert!(state.settled());
        assert_eq!(state.status().waiting_for_host.as_deref(), Some("busy"));
        assert!(matches!(state.next_job(|_| None), Job::Make(..)));
        state.finished(&key, Err(Error::invalid_argument("no")));
        assert_eq!(state.errors, 1);
        assert!(matches!(state.next_job(|_| None), Job::Wait(Some(_))));
    }
}
