//! Exit hooks: on SIGINT, SIGTERM and normal exit, the `process`-lifetime containers this
//! process created are removed (bounded in time, never throwing), then the signal's default
//! behaviour continues. Installed once per process, lazily by the classes that create
//! containers.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use napi::bindgen_prelude::Function;
use napi::Env;

use crate::reaper::cleanup_blocking;
use crate::runtime::has_process_containers;

/// How long exit cleanup may hold up the exit.
const CLEANUP_LIMIT: Duration = Duration::from_secs(5);

/// Re-raises a signal only when our listener is the sole one, so a host that handles the
/// signal itself keeps its behaviour; with ours alone, the process ends as it would have.
const INSTALLER: &str = r#"(function (cleanup) {
  let done = false
  const once = () => { if (!done) { done = true; cleanup() } }
  const forward = (signal) => {
    const handler = () => {
      once()
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, handler)
        process.kill(process.pid, signal)
      }
    }
    process.on(signal, handler)
  }
  forward('SIGINT')
  forward('SIGTERM')
  process.on('exit', once)
})"#;

pub fn install(env: &Env) -> napi::Result<()> {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    let cleanup: Function<(), ()> =
        env.create_function_from_closure("containerIsolationExitCleanup", |_ctx| {
            if has_process_containers() {
                let _ = std::panic::catch_unwind(|| cleanup_blocking(CLEANUP_LIMIT));
            }
            Ok(())
        })?;
    let installer: Function<Function<(), ()>, ()> = env.run_script(INSTALLER)?;
    installer.call(cleanup)
}
