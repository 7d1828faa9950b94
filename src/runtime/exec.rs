//! Running a command in a container with its output buffered: the exec is marked with a
//! token so its whole tree can be killed, its exit code is read only after the stream has
//! ended and the engine reports it (the exit-code race of PITFALLS), and a timeout kills
//! the tree inside the container before the call rejects.

use std::collections::BTreeMap;
use std::time::Duration;

use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;

use super::exec_token::{new_exec_token, token_entry, EXEC_TOKEN_VAR};
use crate::engine::Engine;
use crate::error::{Error, ErrorCode, Result};

/// How long the engine may take to publish an exit code after the stream closed.
const EXIT_CODE_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Default)]
pub struct ExecRequest {
    pub command: Vec<String>,
    pub working_dir: Option<String>,
    pub env: BTreeMap<String, String>,
    pub stdin: Option<Vec<u8>>,
    pub timeout: Option<Duration>,
    pub user: Option<String>,
    /// `environmentMode: 'replace'`: the command gets `env` only, not the container's.
    pub replace_env: bool,
    /// `run_buffered` keeps at most this many bytes of each stream (the rest is read and
    /// dropped): output the container controls costs the host bounded memory. `None`:
    /// `EXEC_OUTPUT_LIMIT`.
    pub output_limit: Option<usize>,
}

/// What `run_buffered` keeps of each stream when the request names no limit.
pub const EXEC_OUTPUT_LIMIT: usize = 64 << 20;

impl ExecRequest {
    /// The bytes of each stream `run_buffered` keeps.
    pub fn kept_output(&self) -> usize {
        self.output_limit.unwrap_or(EXEC_OUTPUT_LIMIT)
    }
}

impl ExecRequest {
    /// Rejects an empty command or program name, NUL in an argument, and a bad `env`.
    pub fn check_command(&self, container: &str) -> Result<()> {
        if self.command.first().is_none_or(|c| c.is_empty()) {
            return Err(Error::invalid_argument(format!(
                "exec in container '{container}': the command is empty"
            )));
        }
        if self.command.iter().any(|a| a.contains('\0')) {
            return Err(Error::invalid_argument(format!(
                "exec in container '{container}': an argument contains NUL"
            )));
        }
        super::check_environment(&self.env, &format!("exec in container '{container}'"))
    }

    /// The argv and environment an engine exec is given, marked with `token`. In `replace`
    /// mode `env -i` runs the command with `env` and the token only (an exec cannot clear
    /// the container's environment).
    pub fn marked_command(
        &self,
        token: &str,
        container: &str,
    ) -> Result<(Vec<String>, BTreeMap<String, String>)> {
        let marker = BTreeMap::from([(EXEC_TOKEN_VAR.to_string(), token.to_string())]);
        if !self.replace_env {
            let mut env = self.env.clone();
            env.extend(marker);
            return Ok((self.command.clone(), env));
        }
        if self.command[0].contains('=') {
            return Err(Error::invalid_argument(format!(
                "exec in container '{container}': with environmentMode 'replace' and no session agent, the program name may not contain '='"
            )));
        }
        let mut argv = vec!["env".to_string(), "-i".to_string(), token_entry(token)];
        argv.extend(self.env.iter().map(|(k, v)| format!("{k}={v}")));
        argv.extend(self.command.iter().cloned());
        Ok((argv, marker))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecOutcome {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub exit_code: i64,
}

/// An exec's multiplexed output, as the engine streams it.
pub type ExecOutput = std::pin::Pin<
    Box<dyn futures_util::Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send>,
>;

/// A started exec whose output is read by the caller.
pub struct StartedExec {
    pub exec_id: String,
    pub token: String,
    pub output: ExecOutput,
    /// The exec's stdin, for `start_attached` only.
    pub input: Option<std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>>,
}

pub fn subject(container: &str, command: &[String]) -> String {
    format!("exec {:?} in container '{container}'", command.join(" "))
}

/// Creates and starts an exec marked with a fresh token, writing `stdin` (then closing it).
pub async fn start(engine: &Engine, container: &str, req: &ExecRequest) -> Result<StartedExec> {
    start_with(engine, container, req, false).await
}

/// As `start`, with stdin attached and left open for the caller (`StartedExec::input`).
pub async fn start_attached(
    engine: &Engine,
    container: &str,
    req: &ExecRequest,
) -> Result<StartedExec> {
    start_with(engine, container, req, true).await
}

async fn start_with(
    engine: &Engine,
    container: &str,
    req: &ExecRequest,
    keep_input: bool,
) -> Result<StartedExec> {
    req.check_command(container)?;
    let what = subject(container, &req.command);
    let token = new_exec_token();
    let (argv, env) = req.marked_command(&token, container)?;
    let env = env.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    let options = CreateExecOptions {
        cmd: Some(argv),
        env: Some(env),
        working_dir: req.working_dir.clone(),
        user: req.user.clone(),
        attach_stdin: Some(req.stdin.is_some()),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        tty: Some(false),
        ..Default::default()
    };
    let docker = engine.docker();
    let created = engine
        .call(&what, docker.create_exec(container, options))
        .await?;
    let started = engine
        .call(
            &what,
            docker.start_exec(
                &created.id,
                Some(StartExecOptions {
                    detach: false,
                    tty: false,
                    output_capacity: Some(64 * 1024),
                }),
            ),
        )
        .await?;
    let StartExecResults::Attached { output, mut input } = started else {
        return Err(Error::new(
            ErrorCode::EngineError,
            format!("{what}: the engine started the exec detached"),
        ));
    };
    if keep_input {
        return Ok(StartedExec {
            exec_id: created.id,
            token,
            output,
            input: Some(input),
        });
    }
    if let Some(bytes) = &req.stdin {
        let bytes = bytes.clone();
        // Written concurrently so that a command that fills its output pipe before
        // reading all of stdin cannot deadlock us.
        tokio::spawn(async move {
            let _ = input.write_all(&bytes).await;
            let _ = input.shutdown().await;
        });
    } else {
        drop(input);
    }
    Ok(StartedExec {
        exec_id: created.id,
        token,
        output,
        input: None,
    })
}

/// Polls the exec until the engine reports it finished with an exit code.
pub async fn exit_code(engine: &Engine, exec_id: &str, what: &str) -> Result<i64> {
    let deadline = tokio::time::Instant::now() + EXIT_CODE_WAIT;
    let mut delay = Duration::from_millis(2);
    loop {
        let inspected = engine
            .call(what, engine.docker().inspect_exec(exec_id))
            .await?;
        if inspected.running != Some(true) {
            if let Some(code) = inspected.exit_code {
                return Ok(code);
            }
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::new(
                ErrorCode::EngineError,
                format!("{what}: the engine reported no exit code after the output ended"),
            ));
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(Duration::from_millis(50));
    }
}

/// A helper exec of our own (output discarded), bounded by the engine's request timeout
/// but never killed (it is itself what kills): returns its exit code.
pub async fn run_plain(
    engine: &Engine,
    container: &str,
    command: Vec<String>,
    user: Option<&str>,
) -> Result<i64> {
    let req = ExecRequest {
        command,
        user: user.map(str::to_string),
        ..Default::default()
    };
    let what = subject(container, &req.command);
    let limit = engine.timeout();
    tokio::time::timeout(limit, async {
        let mut started = start(engine, container, &req).await?;
        while started.output.next().await.is_some() {}
        exit_code(engine, &started.exec_id, &what).await
    })
    .await
    .map_err(|_| {
        Error::timeout(format!(
            "{what} did not finish within {} ms",
            limit.as_millis()
        ))
    })?
}
