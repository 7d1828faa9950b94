//! A terminal through the engine's own TTY exec, where no agent runs: the exec created with
//! a TTY, its raw output stream, its size set right after it starts and on every resize,
//! and its tree found by its token (as for every engine exec) for signals.

use std::pin::Pin;

use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use bollard::query_parameters::ResizeExecOptions;
use futures_util::StreamExt;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

use crate::engine::{from_bollard, Engine};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::exec::{self, ExecOutput, ExecRequest};
use crate::runtime::exec_token::new_exec_token;
use crate::runtime::process_kill::{ExecTree, Signal};

/// How long `signal` waits for the engine before it resolves anyway.
const SIGNAL_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

pub struct EngineInput {
    tree: ExecTree,
    stdin: Mutex<Pin<Box<dyn AsyncWrite + Send>>>,
}

pub struct EngineOutput {
    output: ExecOutput,
    engine: Engine,
    exec_id: String,
    what: String,
    /// The output stream has ended (the exit code is next).
    drained: bool,
    ended: bool,
}

/// Creates and starts `request` (argv, environment, directory, user) on a TTY of
/// `cols` × `rows`.
pub async fn start(
    engine: &Engine,
    container: &str,
    request: &ExecRequest,
    (cols, rows): (u16, u16),
) -> Result<(EngineInput, EngineOutput)> {
    let what = format!(
        "terminal {:?} in container '{container}'",
        request.command.join(" ")
    );
    let token = new_exec_token();
    let (argv, env) = request.marked_command(&token, container)?;
    let options = CreateExecOptions {
        cmd: Some(argv),
        env: Some(env.into_iter().map(|(k, v)| format!("{k}={v}")).collect()),
        working_dir: request.working_dir.clone(),
        user: request.user.clone(),
        attach_stdin: Some(true),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        tty: Some(true),
        ..Default::default()
    };
    let docker = engine.docker();
    let created = engine
        .call(&what, docker.create_exec(container, options))
        .await?;
    let start = StartExecOptions {
        detach: false,
        tty: true,
        output_capacity: Some(64 * 1024),
    };
    let started = engine
        .call(&what, docker.start_exec(&created.id, Some(start)))
        .await?;
    let StartExecResults::Attached { output, input } = started else {
        return Err(Error::new(
            ErrorCode::EngineError,
            format!("{what}: the engine started the exec detached"),
        ));
    };
    let input = EngineInput {
        tree: ExecTree {
            engine: engine.clone(),
            container: container.to_string(),
            exec_id: created.id.clone(),
            token,
        },
        stdin: Mutex::new(input),
    };
    input.resize(cols, rows).await?;
    let output = EngineOutput {
        output,
        engine: engine.clone(),
        exec_id: created.id,
        what,
        drained: false,
        ended: false,
    };
    Ok((input, output))
}

impl EngineInput {
    pub async fn write(&self, data: &[u8]) -> Result<()> {
        let mut stdin = self.stdin.lock().await;
        let written = match stdin.write_all(data).await {
            Ok(()) => stdin.flush().await,
            Err(e) => Err(e),
        };
        written.map_err(|e| Error::new(ErrorCode::EngineError, format!("terminal input: {e}")))
    }

    pub async fn resize(&self, cols: u16, rows: u16) -> Result<()> {
        let size = ResizeExecOptions {
            h: i32::from(rows),
            w: i32::from(cols),
        };
        let what = format!("resizing the terminal of exec {}", self.tree.exec_id);
        let engine = &self.tree.engine;
        engine
            .call(&what, engine.docker().resize_exec(&self.tree.exec_id, size))
            .await
    }

    /// SIGKILL kills the tree; any other signal is sent as SIGTERM (what the engine path
    /// can send to a tree it finds by token).
    pub async fn signal(&self, signo: i32) -> Result<()> {
        let signal = match signo {
            libc::SIGKILL => Signal::Kill,
            _ => Signal::Term,
        };
        let sent = self.tree.clone().signal_in_background(signal);
        match tokio::time::timeout(SIGNAL_WAIT, sent).await {
            Ok(Ok(Some(result))) => result,
            _ => Ok(()),
        }
    }
}

impl EngineOutput {
    /// The next output bytes, `Ok(Err(code))` at the end, `None` after it.
    pub async fn next(&mut self) -> Result<Option<std::result::Result<Vec<u8>, i64>>> {
        if self.ended {
            return Ok(None);
        }
        // Each step may be abandoned at its await (a caller that only takes what is ready)
        // and is taken up again on the next call.
        if !self.drained {
            if let Some(frame) = self.output.next().await {
                let frame = frame.map_err(|e| self.engine.annotate(from_bollard(e, &self.what)))?;
                return Ok(Some(Ok(frame.into_bytes().to_vec())));
            }
            self.drained = true;
        }
        let code = exec::exit_code(&self.engine, &self.exec_id, &self.what).await?;
        self.ended = true;
        Ok(Some(Err(code)))
    }
}
