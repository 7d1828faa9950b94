//! How a command's run ended, as both ways of running one (the session agent, the
//! engine's exec) report it, and the timings of terminating one.

use std::time::Duration;

/// Between SIGTERM and SIGKILL.
pub const TERMINATE_GRACE: Duration = Duration::from_secs(1);
/// After SIGKILL, how long the output may stay open before we stop waiting (the grace and
/// this together stay within `stop::SETTLE`).
pub const KILL_DRAIN: Duration = Duration::from_millis(450);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Terminated,
    TimedOut,
}

pub struct RunEnd {
    /// Why we ended it, if we did.
    pub ending: Option<Ending>,
    /// Whether SIGKILL was needed.
    pub killed: bool,
    /// The exit status the command reported, if it could be learnt.
    pub exit: crate::error::Result<i64>,
}
