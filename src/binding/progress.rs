//! `onProgress` and `pull` as JavaScript gives them: the callback bridged as a weak
//! threadsafe function (it never keeps Node running), the policy's three words checked.

use std::sync::Arc;

use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use crate::engine::PullPolicy;
use crate::error::{Error, Result};
use crate::progress::{ProgressEvent, ProgressSink, ProgressTarget};

/// One step of a session's creation, as it happens.
#[napi(object)]
pub struct ProgressEventInfo {
    /// The session being created.
    pub session_id: String,
    /// `pull`: an image comes from its registry; `build`: devcontainer.json's Dockerfile
    /// (or the remote user's uid image) is built; `features`: the features image is built;
    /// `create`: the container is made and started; `lifecycle`: a lifecycle command runs.
    #[napi(ts_type = "'pull' | 'build' | 'features' | 'create' | 'lifecycle'")]
    pub phase: String,
    /// The image pulled, a line of the build's output, or the step.
    pub detail: String,
    /// Pulls: bytes downloaded so far, over all layers.
    pub current: Option<f64>,
    /// Pulls: bytes to download as far as known; the last event of a pull has
    /// `current === total`.
    pub total: Option<f64>,
}

pub type ProgressCallback =
    ThreadsafeFunction<ProgressEventInfo, (), ProgressEventInfo, napi::Status, false, true>;

struct JsProgress(ProgressCallback);

impl ProgressSink for JsProgress {
    fn event(&self, e: ProgressEvent) {
        let info = ProgressEventInfo {
            session_id: e.session_id,
            phase: e.phase.as_str().to_string(),
            detail: e.detail,
            current: e.current.map(|n| n as f64),
            total: e.total.map(|n| n as f64),
        };
        self.0.call(info, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

pub fn progress_target(callback: Option<ProgressCallback>) -> Option<ProgressTarget> {
    callback.map(|f| ProgressTarget(Arc::new(JsProgress(f))))
}

/// `'missing' | 'always' | 'never'`; anything else is `INVALID_ARGUMENT`.
pub fn pull_policy(text: Option<String>) -> Result<Option<PullPolicy>> {
    text.map(|t| {
        PullPolicy::parse(&t).ok_or_else(|| {
            Error::invalid_argument(format!("pull '{t}' is not 'missing', 'always' or 'never'"))
        })
    })
    .transpose()
}
