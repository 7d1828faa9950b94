//! `DockerRuntime.exec` through the agent: the command's output buffered, its stdin written
//! and closed, and on timeout its whole tree killed before the call rejects `TIMEOUT`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use container_isolation_agent::protocol::Spawn;

use super::agent_accounts::connection_user;
use super::agent_connection::AgentConnection;
use super::agent_process::{AgentProcess, ProcessEvent};
use crate::error::{Error, Result};
use crate::output::StreamKind;
use crate::runtime::{ExecOutcome, ExecRequest};

/// The command of `request` as the agent runs it, as `request.user` (else the container's).
pub async fn spawn_for(connection: &Arc<AgentConnection>, request: &ExecRequest) -> Result<Spawn> {
    let user = connection_user(connection, request.user.as_deref()).await?;
    Ok(Spawn {
        argv: request.command.clone(),
        cwd: request.working_dir.clone(),
        replace_env: request.replace_env,
        env: request.env.clone().into_iter().collect(),
        creds: user.creds(),
        home: user.home.clone(),
        stdin: request.stdin.is_some(),
    })
}

/// How long a timed-out command's kill is waited for before the call rejects anyway.
const KILL_WAIT: Duration = Duration::from_millis(1500);

/// Runs `request` to its end with its output buffered (each stream cut at
/// `request.kept_output()`). The timeout covers everything from the spawn on; past it the
/// command's tree is killed (waited for at most `KILL_WAIT`) and the call rejects `TIMEOUT`.
pub async fn run_buffered(
    connection: &Arc<AgentConnection>,
    request: ExecRequest,
) -> Result<ExecOutcome> {
    request.check_command(&connection.container)?;
    let what = crate::runtime::exec::subject(&connection.container, &request.command);
    let deadline = request.timeout.map(|t| Instant::now() + t);
    let timed_out = || {
        Error::timeout(format!(
            "{what} ran past its timeout of {} ms and was killed inside the container",
            request.timeout.unwrap_or_default().as_millis()
        ))
    };
    let spawning = async {
        let spawn = spawn_for(connection, &request).await?;
        AgentProcess::spawn(connection, spawn).await
    };
    let mut process = match before(deadline, spawning).await {
        Some(process) => process?,
        None => return Err(timed_out()),
    };
    if let Some(stdin) = request.stdin.clone() {
        let control = process.control();
        // Written alongside the reading, so that a command that fills its output before it
        // has read all of stdin cannot stall.
        tokio::spawn(async move {
            let _ = control.write_stdin(&stdin).await;
            let _ = control.close_stdin().await;
        });
    }
    let mut outcome = ExecOutcome::default();
    match before(
        deadline,
        collect(&mut process, &mut outcome, request.kept_output()),
    )
    .await
    {
        Some(exit) => {
            outcome.exit_code = exit?;
            Ok(outcome)
        }
        None => {
            let _ = process.control().kill();
            let _ = tokio::time::timeout(KILL_WAIT, killed(&mut process)).await;
            Err(timed_out())
        }
    }
}

/// `work`'s result, or `None` when `deadline` comes first.
async fn before<T>(deadline: Option<Instant>, work: impl Future<Output = T>) -> Option<T> {
    match deadline {
        Some(at) => tokio::time::timeout_at(at, work).await.ok(),
        None => Some(work.await),
    }
}

/// The command's output into `outcome` up to its exit code.
async fn collect(
    process: &mut AgentProcess,
    outcome: &mut ExecOutcome,
    limit: usize,
) -> Result<i64> {
    loop {
        let (into, data) = match process.next().await? {
            ProcessEvent::Output(StreamKind::Stdout, data) => (&mut outcome.stdout, data),
            ProcessEvent::Output(StreamKind::Stderr, data) => (&mut outcome.stderr, data),
            ProcessEvent::Exited(exit) => return Ok(exit.code),
            ProcessEvent::Signalled(_) => continue,
        };
        let room = limit.saturating_sub(into.len());
        into.extend_from_slice(&data[..room.min(data.len())]);
    }
}

/// Waits until the kill has been carried out and the command has exited.
async fn killed(process: &mut AgentProcess) {
    let (mut signalled, mut exited) = (false, false);
    while !(signalled && exited) {
        match process.next().await {
            Ok(ProcessEvent::Signalled(_)) => signalled = true,
            Ok(ProcessEvent::Exited(_)) => exited = true,
            Ok(ProcessEvent::Output(..)) => {}
            Err(_) => return,
        }
    }
}
