//! A command run to completion with its output buffered, killed with its whole tree inside
//! the container when it outlives its timeout.

use std::time::Duration;

use futures_util::StreamExt;

use super::exec::{exit_code, start, subject, ExecOutcome, ExecRequest};
use super::process_kill::{ExecTree, Signal};
use crate::engine::{Engine, FrameDemux};
use crate::error::{Error, Result};
use crate::output::StreamKind;

/// How long the rejection waits for a timed-out exec's kill (and its output's end).
const KILL_WAIT: Duration = Duration::from_millis(1500);

/// Runs a command to completion with buffered output. A non-zero exit is a result; a
/// timeout kills the command's whole tree in the container and rejects with `TIMEOUT`.
pub async fn run_buffered(
    engine: &Engine,
    container: &str,
    req: ExecRequest,
) -> Result<ExecOutcome> {
    let what = subject(container, &req.command);
    let mut started = start(engine, container, &req).await?;
    let mut outcome = ExecOutcome::default();
    let drain = async {
        let mut demux = FrameDemux::default();
        while let Some(frame) = started.output.next().await {
            let frame =
                frame.map_err(|e| engine.annotate(crate::engine::from_bollard(e, &what)))?;
            let (into, bytes) = match demux.split(frame) {
                Some((StreamKind::Stdout, bytes)) => (&mut outcome.stdout, bytes),
                Some((StreamKind::Stderr, bytes)) => (&mut outcome.stderr, bytes),
                None => continue,
            };
            let room = req.kept_output().saturating_sub(into.len());
            into.extend_from_slice(&bytes[..room.min(bytes.len())]);
        }
        Ok(())
    };
    let finished = match req.timeout {
        Some(limit) => tokio::time::timeout(limit, drain).await.ok(),
        None => Some(drain.await),
    };
    match finished {
        Some(result) => {
            result?;
            outcome.exit_code = exit_code(engine, &started.exec_id, &what).await?;
            Ok(outcome)
        }
        None => {
            // Bounded, whatever the engine or the container does: the kill goes on in the
            // background past `KILL_WAIT`.
            let tree = ExecTree {
                engine: engine.clone(),
                container: container.to_string(),
                exec_id: started.exec_id.clone(),
                token: started.token.clone(),
            };
            let killed = tree.signal_in_background(Signal::Kill);
            let _ = tokio::time::timeout(KILL_WAIT, async {
                if let Ok(Some(_)) = killed.await {
                    while started.output.next().await.is_some() {}
                }
            })
            .await;
            Err(Error::timeout(format!(
                "{what} ran past its timeout of {} ms and was killed inside the container",
                req.timeout.unwrap_or_default().as_millis()
            )))
        }
    }
}

#[cfg(test)]
#[path = "exec_buffered_tests.rs"]
mod tests;
