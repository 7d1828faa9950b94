//! Warm pools (docs/contract.md §6, "Warm pools"): containers created and started ahead of
//! the sessions that will claim them, for one set of resolved settings at a time, refilled
//! in the background one at a time while the host can spare it. What a member is, and how
//! one is made, is the caller's (`MemberFactory`); the pool keeps, hands out and retires
//! them.

mod host_headroom;
mod member_factory;
mod pool;
mod pool_folder;
mod pool_key;
mod pool_options;
mod pool_state;
mod refill;

pub use member_factory::MemberFactory;
pub use pool::{ready_of, status_of, Creating, WarmPool};
pub use pool_folder::place_clone;
pub use pool_key::PoolKey;
pub use pool_options::{PoolOptions, MAX_SIZE};
pub use pool_state::{Member, PoolStatus};
