//! A hook run before each use of a container by a FileIO or a Shell: it may start the
//! container again (after an idle stop) and it learns when the use ends.

use std::future::Future;
use std::pin::Pin;

use crate::error::Result;

/// Held for the duration of one use; dropping it ends the use.
pub struct UseGuard {
    _on_end: Option<Box<dyn Send>>,
}

impl UseGuard {
    pub fn new(on_end: impl Send + 'static) -> UseGuard {
        UseGuard {
            _on_end: Some(Box::new(on_end)),
        }
    }

    pub fn none() -> UseGuard {
        UseGuard { _on_end: None }
    }
}

pub type UseFuture<'a> = Pin<Box<dyn Future<Output = Result<UseGuard>> + Send + 'a>>;

pub trait ContainerUse: Send + Sync {
    fn begin(&self) -> UseFuture<'_>;
}

/// Begins a use where something tracks uses; a guard that does nothing otherwise.
pub async fn begin_use(usage: Option<&std::sync::Arc<dyn ContainerUse>>) -> Result<UseGuard> {
    match usage {
        Some(usage) => usage.begin().await,
        None => Ok(UseGuard::none()),
    }
}
