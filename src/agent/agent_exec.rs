//! `DockerRuntime.exec` through the agent: the command's output buffered, its stdin written
//! and closed, and on timeout its whole tree killed before the call rejects `TIMEOUT`.

use std::sync::Arc;

use container_isolation_agent::protocol::Spawn;

use super::agent_connection::AgentConnection;
use super::agent_process::{AgentProcess, ProcessEvent};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::output::StreamKind;
use crate::runtime::{ExecOutcome, ExecRequest};

/// The command of `request` as the agent runs it, as `request.user` (else the container's).
pub async fn spawn_for(
    engine: &Engine,
    connection: &Arc<AgentConnection>,
    request: &ExecRequest,
) -> Result<Spawn> {
    let user = connection.user(engine, request.user.as_deref()).await?;
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

pub async fn run_buffered(
    engine: &Engine,
    connection: &Arc<AgentConnection>,
    request: ExecRequest,
) -> Result<ExecOutcome> {
    request.check_command(&connection.container)?;
    let what = crate::runtime::exec::subject(&connection.container, &request.command);
    let spawn = spawn_for(engine, connection, &request).await?;
    let mut process = AgentProcess::spawn(connection, spawn).await?;
    let control = process.control();
    if let Some(stdin) = request.stdin {
        let control = control.clone();
        // Written alongside the reading, so that a command that fills its output before it
        // has read all of stdin cannot stall.
        tokio::spawn(async move {
            let _ = control.write_stdin(&stdin).await;
            let _ = control.close_stdin().await;
        });
    }
    let mut outcome = ExecOutcome::default();
    let collect = async {
        loop {
            match process.next().await? {
                ProcessEvent::Output(StreamKind::Stdout, data) => {
                    outcome.stdout.extend_from_slice(&data)
                }
                ProcessEvent::Output(StreamKind::Stderr, data) => {
                    outcome.stderr.extend_from_slice(&data)
                }
                ProcessEvent::Exited(exit) => return Ok::<i64, Error>(exit.code),
                ProcessEvent::Signalled(_) => {}
            }
        }
    };
    let finished = match request.timeout {
        Some(limit) => tokio::time::timeout(limit, collect).await.ok(),
        None => Some(collect.await),
    };
    match finished {
        Some(code) => {
            outcome.exit_code = code?;
            Ok(outcome)
        }
        None => {
            control.kill().await?;
            Err(Error::timeout(format!(
                "{what} ran past its timeout of {} ms and was killed inside the container",
                request.timeout.unwrap_or_default().as_millis()
            )))
        }
    }
}
