//! `Workspaces.poolStatus()` and `poolReady()`.

use napi::bindgen_prelude::{Either, Undefined};
use napi_derive::napi;

use super::error::Outcome;
use super::warm_pool::WarmPoolStatus;
use super::workspace_sessions::Sessions;
use super::workspaces::Workspaces;

#[napi]
impl Workspaces {
    /// The warm pool as it is now; `undefined` without the `pool` option.
    #[napi(ts_return_type = "WarmPoolStatus | undefined")]
    pub fn pool_status(&self) -> Either<WarmPoolStatus, Undefined> {
        let status = match &self.sessions {
            Sessions::Engine(sessions) => sessions.pool_status(),
            Sessions::Pods(pods) => pods.pool_status(),
        };
        match status {
            Some(status) => Either::A(status.into()),
            None => Either::B(()),
        }
    }

    /// Resolves once the pool holds `size` ready containers for the settings of the latest
    /// session (at once before any session, or while the host cannot spare a member:
    /// `waitingForHost` says why); rejects with a member's failure to be made meanwhile.
    /// `undefined` without the `pool` option.
    #[napi(ts_return_type = "Promise<WarmPoolStatus | undefined>")]
    pub async fn pool_ready(&self) -> Outcome<Option<WarmPoolStatus>> {
        let ready = match &self.sessions {
            Sessions::Engine(sessions) => sessions.pool_ready().await,
            Sessions::Pods(pods) => pods.pool_ready().await,
        };
        ready.map(|status| status.map(WarmPoolStatus::from)).into()
    }
}
