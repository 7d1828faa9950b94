//! A run that did not settle in time after its stop is answered without waiting for it;
//! what is left of it — the command's tree in the container — is killed in the background,
//! bounded in time, so that no later call waits behind it.

use std::sync::Mutex;

use crate::agent::ProcessControl;
use crate::runtime::process_kill::{ExecTree, Signal};

/// How to kill a started command from outside its run.
pub enum Leftover {
    Agent(ProcessControl),
    Engine(ExecTree),
}

/// Filled in by the run once its command has started.
#[derive(Default)]
pub struct LeftoverSlot(Mutex<Option<Leftover>>);

impl LeftoverSlot {
    pub fn set(&self, leftover: Leftover) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(leftover);
    }

    /// Kills what the abandoned run started, in the background.
    pub fn kill_in_background(&self) {
        let leftover = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        match leftover {
            None => {}
            // A control frame: sent ahead of anything queued, without waiting.
            Some(Leftover::Agent(control)) => {
                let _ = control.kill();
            }
            Some(Leftover::Engine(tree)) => {
                tree.signal_in_background(Signal::Kill);
            }
        }
    }
}
