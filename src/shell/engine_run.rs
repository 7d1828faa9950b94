//! Running a shell command by an engine exec (where the session agent cannot run): output
//! from the exec's stream, the tree signalled by its token, the exit code read from the
//! engine once the stream has ended.

use futures_util::StreamExt;
use tokio::time::sleep_until;

use super::line_sink::LineSink;
use super::run_end::{RunEnd, KILL_DRAIN, TERMINATE_GRACE};
use super::stop::Stop;
use crate::engine::{from_bollard, Engine, FrameDemux};
use crate::error::Result;
use crate::output::OutputLine;
use crate::runtime::exec::{self, StartedExec};
use crate::runtime::process_kill::{signal_exec_tree, tree_alive, Signal};

/// How many times SIGKILL is sent to a tree that is still seen alive after it.
const KILL_ATTEMPTS: usize = 3;

#[derive(Clone, Copy)]
enum Phase {
    Running,
    Terminating { since: tokio::time::Instant },
    Killed { since: tokio::time::Instant },
}

pub struct EngineRun<'a> {
    pub engine: &'a Engine,
    pub container: &'a str,
    pub exec_id: String,
    pub token: String,
    pub what: String,
}

impl EngineRun<'_> {
    pub async fn run<F: FnMut(&OutputLine) + Send>(
        self,
        started: StartedExec,
        stop: Stop<'_>,
        sink: &mut LineSink<F>,
    ) -> Result<RunEnd> {
        let mut output = started.output;
        let mut demux = FrameDemux::default();
        let mut phase = Phase::Running;
        let mut ending = None;
        let mut killed = false;
        let mut stream_error = None;
        loop {
            let frame = match phase {
                Phase::Running => tokio::select! {
                    frame = output.next() => frame,
                    why = stop.stopped() => {
                        ending = Some(why);
                        phase = self.begin_termination().await;
                        continue;
                    }
                },
                Phase::Terminating { since } => tokio::select! {
                    frame = output.next() => frame,
                    _ = sleep_until(since + TERMINATE_GRACE) => {
                        self.kill_tree().await;
                        killed = true;
                        phase = Phase::Killed { since: tokio::time::Instant::now() };
                        continue;
                    }
                },
                Phase::Killed { since } => tokio::select! {
                    frame = output.next() => frame,
                    _ = sleep_until(since + KILL_DRAIN) => break,
                },
            };
            match frame {
                None => break,
                Some(Ok(frame)) => {
                    if let Some((kind, bytes)) = demux.split(frame) {
                        sink.push(kind, &bytes).await;
                    }
                }
                Some(Err(err)) => {
                    stream_error = Some(self.engine.annotate(from_bollard(err, &self.what)));
                    break;
                }
            }
        }
        if let Phase::Terminating { since } = phase {
            killed = self.kill_survivors(since).await;
        }
        sink.finish().await;
        if let Some(err) = stream_error {
            if ending.is_none() {
                return Err(err);
            }
        }
        let exit = exec::exit_code(self.engine, &self.exec_id, &self.what).await;
        Ok(RunEnd {
            ending,
            killed,
            exit,
        })
    }

    /// The grace period counts from the stop, not from the end of the SIGTERM exec: that
    /// exec takes a round trip or more on a remote engine, and the run must settle within
    /// `stop::SETTLE` of the stop with its SIGKILL sent.
    /// The grace period counts from when SIGTERM was delivered, not asked for: over a slow
    /// transport (ssh, a loaded engine) delivering it can take most of the grace.
    async fn begin_termination(&self) -> Phase {
        self.signal(Signal::Term).await;
        Phase::Terminating {
            since: tokio::time::Instant::now(),
        }
    }

    /// Best effort: a failure to signal is retried by the escalation that follows.
    async fn signal(&self, signal: Signal) {
        let (exec_id, token) = (&self.exec_id, &self.token);
        if let Err(err) =
            signal_exec_tree(self.engine, self.container, exec_id, token, signal).await
        {
            tracing::warn!("signalling {} failed: {}", signal.name(), err);
        }
    }

    /// The output closed within the grace period; whatever of the tree is still alive (a
    /// child that closed its output and ignores SIGTERM) gets SIGKILL once the grace period
    /// is over. Returns whether SIGKILL was needed.
    async fn kill_survivors(&self, since: tokio::time::Instant) -> bool {
        let grace_end = since + TERMINATE_GRACE;
        loop {
            match tree_alive(self.engine, self.container, &self.token).await {
                Some(false) => return false,
                Some(true) if tokio::time::Instant::now() < grace_end => {
                    tokio::time::sleep(std::time::Duration::from_millis(25)).await;
                }
                _ => {
                    sleep_until(grace_end).await;
                    self.kill_tree().await;
                    return true;
                }
            }
        }
    }

    /// SIGKILL, sent again while the tree is still seen alive: a signal sent by an exec in
    /// the container (a remote engine) can be lost when that exec fails to start.
    async fn kill_tree(&self) {
        for _ in 0..KILL_ATTEMPTS {
            self.signal(Signal::Kill).await;
            if tree_alive(self.engine, self.container, &self.token).await != Some(true) {
                return;
            }
        }
    }
}
