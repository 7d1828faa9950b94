//! What a pool asks of whoever knows what its members are: how one is made from a recipe,
//! and how one is removed.

use std::future::Future;
use std::path::Path;

use super::pool_key::PoolKey;
use crate::error::Result;

pub trait MemberFactory: Send + Sync + 'static {
    /// What a member is made from.
    type Recipe: Send + Sync + 'static;

    /// Creates and starts member `name` from `recipe`, labelled with `key`, mounting the
    /// clone folder `folder` (made, empty); its engine id. Leaves no container behind when
    /// it fails.
    fn make(
        &self,
        recipe: &Self::Recipe,
        key: &PoolKey,
        name: &str,
        folder: &Path,
    ) -> impl Future<Output = Result<String>> + Send;

    /// Removes member `name`'s container; never fails.
    fn remove(&self, name: &str) -> impl Future<Output = ()> + Send;

    /// The memory limit of a member made from `recipe`, if it has one: the host must have
    /// it to spare on top of the pool's own margin.
    fn memory(&self, recipe: &Self::Recipe) -> Option<u64>;

    /// Whether members run on this host, whose load and memory then decide when one is made
    /// (a cluster's members run on its nodes).
    fn on_this_host(&self) -> bool {
        true
    }
}
