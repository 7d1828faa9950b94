//! `DockerRuntime.execStream`'s native half: a started command whose output is pushed to
//! two callbacks (one call at a time, each awaited, so a slow consumer slows the command
//! instead of growing a queue) and whose stdin, signals and end are methods. `lib/` wraps
//! it in Node streams.

use std::collections::HashMap;

use napi::bindgen_prelude::Buffer;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use tokio::sync::watch;

use super::container_types::replaces_environment;
use super::error::Outcome;
use crate::container_runtime::exec_stream::{open_stream, StreamEvent, StreamInput, StreamOutput};
use crate::container_runtime::DockerRuntime;
use crate::error::{Error, Result};
use crate::output::StreamKind;
use crate::runtime::ExecRequest;

pub type ChunkCallback = ThreadsafeFunction<Buffer, (), Buffer, napi::Status, false>;

/// A command for `DockerRuntime.execStream`: Lace's `ExecStreamOptions`.
#[napi(object, object_to_js = false)]
pub struct ExecStreamOptions {
    /// Argv, run without a shell in between.
    pub command: Vec<String>,
    /// Default: the container's working directory.
    #[napi(ts_type = "string | undefined")]
    pub working_directory: Option<String>,
    /// Added to the container's environment, or all of it with `environmentMode:
    /// 'replace'`.
    #[napi(ts_type = "Record<string, string> | undefined")]
    pub environment: Option<HashMap<String, String>>,
    /// `inherit` (default): `environment` is added to the container's; `replace`: the
    /// command gets `environment` only.
    #[napi(ts_type = "'inherit' | 'replace' | undefined")]
    pub environment_mode: Option<String>,
    /// Default: the container's user.
    #[napi(ts_type = "string | undefined")]
    pub user: Option<String>,
    /// Accepted for Lace's interface; every stream here lives until its command ends.
    #[napi(ts_type = "boolean | undefined")]
    pub long_lived: Option<bool>,
}

/// How a streamed command ended.
#[napi(object)]
pub struct ExecStreamExit {
    /// The command's exit code; 128+N when signal N ended it.
    pub exit_code: i64,
    /// The signal that ended the command, where known.
    #[napi(ts_type = "NodeJS.Signals | undefined")]
    pub signal: Option<String>,
}

type Ended = Option<std::result::Result<(i64, Option<i32>), Error>>;

/// A running command of `execStreamNative`, which `execStream` wraps in Node streams.
#[napi]
pub struct NativeExecStream {
    input: StreamInput,
    ended: watch::Receiver<Ended>,
}

pub fn signal_number(name: Option<&str>) -> Result<i32> {
    let name = name.unwrap_or("SIGTERM");
    let bare = name.strip_prefix("SIG").unwrap_or(name);
    Ok(match bare {
        "TERM" => libc::SIGTERM,
        "KILL" => libc::SIGKILL,
        "INT" => libc::SIGINT,
        "HUP" => libc::SIGHUP,
        "QUIT" => libc::SIGQUIT,
        "USR1" => libc::SIGUSR1,
        "USR2" => libc::SIGUSR2,
        "STOP" => libc::SIGSTOP,
        "CONT" => libc::SIGCONT,
        _ => {
            return Err(Error::invalid_argument(format!(
                "signal '{name}' is not one execStream sends"
            )))
        }
    })
}

pub fn signal_name(signo: i32) -> Option<String> {
    let name = match signo {
        libc::SIGTERM => "SIGTERM",
        libc::SIGKILL => "SIGKILL",
        libc::SIGINT => "SIGINT",
        libc::SIGHUP => "SIGHUP",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGABRT => "SIGABRT",
        libc::SIGSEGV => "SIGSEGV",
        _ => return None,
    };
    Some(name.to_string())
}

/// Starts the command and the task that delivers its output.
pub async fn start(
    runtime: &DockerRuntime,
    id: String,
    options: ExecStreamOptions,
    on_stdout: ChunkCallback,
    on_stderr: ChunkCallback,
) -> Result<NativeExecStream> {
    let replace_env = replaces_environment(options.environment_mode.as_deref())?;
    let request = ExecRequest {
        command: options.command,
        working_dir: options.working_directory.filter(|d| !d.is_empty()),
        env: options
            .environment
            .unwrap_or_default()
            .into_iter()
            .collect(),
        user: options.user.filter(|u| !u.is_empty()),
        replace_env,
        ..Default::default()
    };
    let (input, output) = open_stream(runtime, &id, request).await?;
    let (sender, ended) = watch::channel(None);
    tokio::spawn(pump(output, on_stdout, on_stderr, sender));
    Ok(NativeExecStream { input, ended })
}

async fn pump(
    mut output: StreamOutput,
    on_stdout: ChunkCallback,
    on_stderr: ChunkCallback,
    ended: watch::Sender<Ended>,
) {
    let end = loop {
        match output.next().await {
            Ok(Some(StreamEvent::Output(kind, data))) => {
                let callback = match kind {
                    StreamKind::Stdout => &on_stdout,
                    StreamKind::Stderr => &on_stderr,
                };
                // The JS side is gone when this fails; the command still runs to its end.
                let _ = callback.call_async(Buffer::from(data)).await;
            }
            Ok(Some(StreamEvent::Exited { code, signal })) => break Ok((code, signal)),
            Ok(None) => break Err(Error::invalid_argument("the stream ended twice")),
            Err(err) => break Err(err),
        }
    };
    drop(on_stdout);
    drop(on_stderr);
    let _ = ended.send(Some(end));
}

#[napi]
impl NativeExecStream {
    /// Writes to the command's stdin; resolves once the bytes are on their way.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn write(&self, data: Buffer) -> Outcome<()> {
        self.input.write(&data).await.into()
    }

    /// Closes the command's stdin.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn end(&self) -> Outcome<()> {
        self.input.close().await.into()
    }

    /// Signals every process of the command (default SIGTERM; SIGKILL kills them all).
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn kill(&self, signal: Option<String>) -> Outcome<()> {
        async { self.input.signal(signal_number(signal.as_deref())?).await }
            .await
            .into()
    }

    /// Resolves when the command has ended and its output has been delivered.
    #[napi(ts_return_type = "Promise<ExecStreamExit>")]
    pub async fn wait(&self) -> Outcome<ExecStreamExit> {
        let mut ended = self.ended.clone();
        let result = ended.wait_for(|e| e.is_some()).await;
        match result.as_deref() {
            Ok(Some(Ok((code, signal)))) => Outcome(Ok(ExecStreamExit {
                exit_code: *code,
                signal: signal.and_then(signal_name),
            })),
            Ok(Some(Err(err))) => Outcome(Err(err.clone())),
            _ => Outcome(Err(Error::invalid_argument("the stream's task is gone"))),
        }
    }
}
