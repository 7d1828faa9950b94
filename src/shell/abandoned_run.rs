//! A run that did not settle in time after its stop is answered without waiting for it;
//! what is left of it — the command's tree in the container — is killed in the background,
//! bounded in time, so that no later call waits behind it.

use std::sync::Mutex;
use std::time::Duration;

use crate::agent::ProcessControl;
use crate::engine::Engine;
use crate::runtime::process_kill::{signal_exec_tree, Signal};

/// How long the background kill of an engine exec may take.
const ENGINE_KILL_BOUND: Duration = Duration::from_secs(30);

/// How to kill a started command from outside its run.
pub enum Leftover {
    Agent(ProcessControl),
    Engine {
        engine: Engine,
        container: String,
        exec_id: String,
        token: String,
    },
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
            Some(Leftover::Engine {
                engine,
                container,
                exec_id,
                token,
            }) => {
                tokio::spawn(async move {
                    let kill =
                        signal_exec_tree(&engine, &container, &exec_id, &token, Signal::Kill);
                    if tokio::time::timeout(ENGINE_KILL_BOUND, kill).await.is_err() {
                        tracing::warn!("killing exec {exec_id} in '{container}' did not finish");
                    }
                });
            }
        }
    }
}
