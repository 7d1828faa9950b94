//! Running a shell command through the session agent: the command runs under its own
//! reaper, so `terminate()` and timeouts reach every process it started — also those that
//! left its session or cleared their environment — and the exit status comes with the end
//! of its output, with no engine round trip.

use tokio::time::{sleep_until, timeout_at, Instant};

use super::line_sink::LineSink;
use super::run_end::{RunEnd, KILL_DRAIN, TERMINATE_GRACE};
use super::stop::Stop;
use crate::agent::{AgentProcess, ProcessEvent, ProcessExit};
use crate::error::Result;
use crate::output::OutputLine;

#[derive(Clone, Copy)]
enum Phase {
    Running,
    Terminating { since: Instant },
    Killed { since: Instant },
}

pub async fn run<F: FnMut(&OutputLine) + Send>(
    mut process: AgentProcess,
    stop: Stop<'_>,
    sink: &mut LineSink<F>,
) -> Result<RunEnd> {
    let control = process.control();
    let mut phase = Phase::Running;
    let mut ending = None;
    let mut killed = false;
    let exit: Option<ProcessExit> = loop {
        let event = match phase {
            Phase::Running => tokio::select! {
                event = process.next() => event,
                why = stop.stopped() => {
                    ending = Some(why);
                    control.signal(libc::SIGTERM)?;
                    phase = Phase::Terminating { since: Instant::now() };
                    continue;
                }
            },
            Phase::Terminating { since } => tokio::select! {
                event = process.next() => event,
                _ = sleep_until(since + TERMINATE_GRACE) => {
                    control.kill()?;
                    killed = true;
                    phase = Phase::Killed { since: Instant::now() };
                    continue;
                }
            },
            Phase::Killed { since } => match timeout_at(since + KILL_DRAIN, process.next()).await {
                Ok(event) => event,
                Err(_) => break None,
            },
        };
        match event? {
            ProcessEvent::Output(kind, bytes) => sink.push(kind, &bytes).await,
            ProcessEvent::Exited(exit) => break Some(exit),
            ProcessEvent::Signalled(_) => {}
        }
    };
    if let (Phase::Terminating { since }, Some(_)) = (phase, exit) {
        killed = kill_survivors(&mut process, since).await?;
    }
    sink.finish().await;
    let exit = exit.map(|e| e.code).ok_or_else(|| {
        crate::error::Error::new(
            crate::error::ErrorCode::EngineError,
            "the command's end was not reported after SIGKILL",
        )
    });
    Ok(RunEnd {
        ending,
        killed,
        exit,
    })
}

/// The command exited within the grace period; whatever it left running (a child that
/// ignores SIGTERM) is killed once the grace period is over. Returns whether anything was.
async fn kill_survivors(process: &mut AgentProcess, since: Instant) -> Result<bool> {
    let control = process.control();
    control.signal(0)?;
    if signalled(process).await? == 0 {
        return Ok(false);
    }
    sleep_until(since + TERMINATE_GRACE).await;
    control.kill()?;
    Ok(signalled(process).await? > 0)
}

/// The count of the next `Signalled` reply.
async fn signalled(process: &mut AgentProcess) -> Result<u32> {
    loop {
        if let ProcessEvent::Signalled(count) = process.next().await? {
            return Ok(count);
        }
    }
}
