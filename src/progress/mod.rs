//! What a long operation tells its caller while it runs: events of a session's creation by
//! phase (`pull`, `build`, `features`, `create`, `lifecycle`), throttled per phase.

mod progress_event;
mod reporter;

pub use progress_event::{Phase, ProgressEvent};
pub use reporter::{Progress, ProgressSink, ProgressTarget, INTERVAL};
