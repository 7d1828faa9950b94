//! The byte channel an agent is spoken to over, whatever carries it: its stdin, its output
//! (stdout for frames, stderr kept for error messages) and how to stop it when it fails.
//! The engines' exec (`from_exec`) is one carrier; a Kubernetes Pod's exec stream another.

use std::pin::Pin;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::io::AsyncWrite;

use crate::engine::FrameDemux;
use crate::output::StreamKind;
use crate::runtime::exec::{ExecOutput, StartedExec};
use crate::runtime::process_kill::{ExecTree, Signal};

/// What the agent writes, each chunk on the stream it came from.
pub type AgentOutput = Pin<Box<dyn Stream<Item = (StreamKind, Bytes)> + Send>>;

/// Ends the agent's process when it broke the protocol (a replaced agent need not stop when
/// its stdin ends). Called once, without waiting.
pub type AgentStop = Box<dyn FnOnce() + Send>;

pub struct AgentChannel {
    pub input: Pin<Box<dyn AsyncWrite + Send>>,
    pub output: AgentOutput,
    pub stop: AgentStop,
}

impl AgentChannel {
    /// The channel of an engine exec started attached with stdin; its tree killed to stop it.
    pub fn from_exec(started: StartedExec, tree: ExecTree) -> Option<AgentChannel> {
        Some(AgentChannel {
            input: started.input?,
            output: exec_output(started.output),
            stop: Box::new(move || {
                tree.signal_in_background(Signal::Kill);
            }),
        })
    }
}

/// An engine exec's output as the agent's, up to its first error.
pub fn exec_output(output: ExecOutput) -> AgentOutput {
    let mut demux = FrameDemux::default();
    Box::pin(
        output
            .take_while(|chunk| std::future::ready(chunk.is_ok()))
            .filter_map(move |chunk| std::future::ready(chunk.ok().and_then(|c| demux.split(c)))),
    )
}
