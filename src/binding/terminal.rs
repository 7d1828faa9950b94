//! The `Terminal` class (docs/contract.md §9) and its options: converts sizes, data and
//! signals, and delivers output to `onData` one call at a time, each awaited, so that a
//! slow listener holds the program, never a queue. Until a listener (or `wait()`) asks for
//! it, no output is read: it waits in the container.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::{Buffer, Either};
use napi_derive::napi;
use tokio::sync::watch;

use super::error::Outcome;
use super::exec_stream::{signal_name, ChunkCallback};
use crate::error::{Error, Result};
use crate::runtime::UseGuard;
use crate::terminal::{TerminalEvent, TerminalInput, TerminalOutput, TerminalRequest};

/// What a terminal runs, and its size.
#[napi(object, object_to_js = false)]
pub struct TerminalOptions {
    /// Argv, run without a shell in between; default: the image's bash, else `sh`.
    #[napi(ts_type = "string[] | undefined")]
    pub command: Option<Vec<String>>,
    /// Columns, 1..=65535.
    pub cols: u32,
    /// Rows, 1..=65535.
    pub rows: u32,
    /// Added to the environment the session's (or container's) commands get; `TERM` is
    /// `xterm-256color` unless set here.
    #[napi(ts_type = "Record<string, string> | undefined")]
    pub env: Option<HashMap<String, String>>,
    /// Absolute container path; default: where the session's commands run.
    #[napi(ts_type = "string | undefined")]
    pub cwd: Option<String>,
    /// `DockerRuntime.terminal` only: the user (default: the container's).
    #[napi(ts_type = "string | undefined")]
    pub user: Option<String>,
}

/// How a terminal's program ended.
#[napi(object)]
pub struct TerminalExit {
    /// The exit code; 128+N when signal N ended the program.
    pub exit_code: i64,
    /// The signal that ended the program, where known.
    #[napi(ts_type = "NodeJS.Signals | undefined")]
    pub signal: Option<String>,
}

pub fn terminal_request(options: TerminalOptions) -> Result<TerminalRequest> {
    let (cols, rows) = TerminalRequest::size(options.cols, options.rows)?;
    Ok(TerminalRequest {
        command: options.command.unwrap_or_default(),
        cols,
        rows,
        env: options.env.unwrap_or_default().into_iter().collect(),
        replace_env: false,
        cwd: options.cwd.filter(|c| !c.is_empty()),
        user: options.user.filter(|u| !u.is_empty()),
    })
}

type Ended = Option<std::result::Result<(i64, Option<i32>), Error>>;

/// A program on a pseudo-terminal in a container.
#[napi]
pub struct Terminal {
    input: TerminalInput,
    /// Taken by the task that delivers the output, once asked for.
    output: Mutex<Option<TerminalOutput>>,
    listener: Arc<Mutex<Option<Arc<ChunkCallback>>>>,
    ended: watch::Receiver<Ended>,
    ending: Mutex<Option<watch::Sender<Ended>>>,
    _use: Mutex<Option<UseGuard>>,
}

impl Terminal {
    pub fn new(input: TerminalInput, output: TerminalOutput, guard: Option<UseGuard>) -> Self {
        let (ending, ended) = watch::channel(None);
        Terminal {
            input,
            output: Mutex::new(Some(output)),
            listener: Arc::new(Mutex::new(None)),
            ended,
            ending: Mutex::new(Some(ending)),
            _use: Mutex::new(guard),
        }
    }

    /// Starts delivering the output (once).
    fn start_delivery(&self) {
        let output = self.output.lock().unwrap_or_else(|e| e.into_inner()).take();
        let ending = self.ending.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let (Some(output), Some(ending)) = (output, ending) {
            napi::bindgen_prelude::spawn(deliver(output, self.listener.clone(), ending));
        }
    }
}

impl Drop for Terminal {
    /// An output never asked for is dropped where the engine path can still kill its
    /// processes (on the runtime; JavaScript's thread has none).
    fn drop(&mut self) {
        let output = self.output.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(output) = output {
            napi::bindgen_prelude::spawn(async move { drop(output) });
        }
    }
}

async fn deliver(
    mut output: TerminalOutput,
    listener: Arc<Mutex<Option<Arc<ChunkCallback>>>>,
    ending: watch::Sender<Ended>,
) {
    let end = loop {
        match output.next().await {
            Ok(Some(TerminalEvent::Output(data))) => {
                let callback = listener.lock().unwrap_or_else(|e| e.into_inner()).clone();
                if let Some(callback) = callback {
                    let _ = callback.call_async(Buffer::from(data)).await;
                }
            }
            Ok(Some(TerminalEvent::Exited { code, signal })) => break Ok((code, signal)),
            Ok(None) => break Err(Error::invalid_argument("the terminal ended twice")),
            Err(err) => break Err(err),
        }
    };
    listener.lock().unwrap_or_else(|e| e.into_inner()).take();
    let _ = ending.send(Some(end));
}

#[napi]
impl Terminal {
    /// Sends `data` as typed (a string as UTF-8); resolves once it is on its way, waiting
    /// while the program has too much unread input.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn write(&self, data: Either<String, Buffer>) -> Outcome<()> {
        let bytes: Vec<u8> = match data {
            Either::A(text) => text.into_bytes(),
            Either::B(buffer) => buffer.to_vec(),
        };
        self.input.write(&bytes).await.into()
    }

    /// Delivers the output to `callback` (replacing an earlier one), chunk by chunk as the
    /// program wrote it, each call awaited before the next.
    #[napi(ts_args_type = "callback: (chunk: Buffer) => void")]
    pub fn on_data(&self, callback: ChunkCallback) {
        *self.listener.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(callback));
        self.start_delivery();
    }

    /// Sets the terminal's size (the program sees SIGWINCH).
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn resize(&self, cols: u32, rows: u32) -> Outcome<()> {
        async {
            let (cols, rows) = TerminalRequest::size(cols, rows)?;
            self.input.resize(cols, rows).await
        }
        .await
        .into()
    }

    /// Signals every process of the terminal (default SIGHUP, as a closed terminal does;
    /// SIGKILL kills them all).
    #[napi(
        ts_args_type = "signal?: NodeJS.Signals",
        ts_return_type = "Promise<void>"
    )]
    pub async fn kill(&self, signal: Option<String>) -> Outcome<()> {
        async {
            let signo = match signal.as_deref() {
                None => libc::SIGHUP,
                name => super::exec_stream::signal_number(name)?,
            };
            self.input.signal(signo).await
        }
        .await
        .into()
    }

    /// Resolves once the program has ended and its output has been delivered (output no
    /// listener takes is dropped); rejects when the container went away under it.
    #[napi(ts_return_type = "Promise<TerminalExit>")]
    pub async fn wait(&self) -> Outcome<TerminalExit> {
        self.start_delivery();
        let mut ended = self.ended.clone();
        let result = ended.wait_for(|e| e.is_some()).await;
        match result.as_deref() {
            Ok(Some(Ok((code, signal)))) => Outcome(Ok(TerminalExit {
                exit_code: *code,
                signal: signal.and_then(signal_name),
            })),
            Ok(Some(Err(err))) => Outcome(Err(err.clone())),
            _ => Outcome(Err(Error::invalid_argument("the terminal's task is gone"))),
        }
    }
}
