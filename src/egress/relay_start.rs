//! How a relay starts: `agent relay` on an exec of the engine's (then offered the direct
//! line), or on a channel its caller started (a Pod's exec stream); its writer and reader
//! tasks, and the `Hello`/`Welcome` that opens the channel.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use container_isolation_agent::protocol::{
    encode, version_accepted, Message, AGENT_STREAM, CONTROL, VERSION,
};
use tokio::sync::{mpsc, oneshot};

use super::super::relay_line::{switch_to_line, Switch, Welcomed};
use super::super::relay_transport::{read_frames, write_frames, Outbound};
use super::{unavailable, Accepted, RelayChannel, Started, SEND_QUEUE, WELCOME_WAIT};
use crate::agent::{exec_output, AgentChannel, AgentFrames, Line, LineFrames};
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::exec::{self, ExecRequest};

impl RelayChannel {
    /// Starts `agent relay` at `agent` in `container`, listening on `ports`, and offers it
    /// the direct line.
    pub async fn start(
        engine: &Engine,
        container: &str,
        agent: &str,
        ports: &[u16],
        max_streams: usize,
        idle: Duration,
    ) -> Result<(Arc<RelayChannel>, mpsc::UnboundedReceiver<Accepted>)> {
        let limits = (max_streams, idle);
        let (channel, accepted, switch, welcome) =
            Self::start_exec(engine, container, agent, ports, limits).await?;
        let Err(why) = channel.take_line(engine, switch, welcome).await else {
            return Ok((channel, accepted));
        };
        // Its frames go elsewhere now: a new relay (which replaces it), on the exec alone.
        channel.close();
        tracing::warn!("network relay in '{container}': {why}; started again without the line");
        let started = Self::start_exec(engine, container, agent, ports, limits).await?;
        Ok(without_line(started, why))
    }

    /// Starts a relay already running at the other end of `channel` (`agent relay <ports>`,
    /// started by the caller), its frames on that channel for good: `no_line` says why.
    pub async fn over(
        channel: AgentChannel,
        container: &str,
        limits: (usize, Duration),
        no_line: String,
    ) -> Result<(Arc<RelayChannel>, mpsc::UnboundedReceiver<Accepted>)> {
        let started = Self::start_on(channel, container, limits).await?;
        Ok(without_line(started, no_line))
    }

    /// Starts the relay's exec on the engine, then as `start_on`.
    async fn start_exec(
        engine: &Engine,
        container: &str,
        agent: &str,
        ports: &[u16],
        limits: (usize, Duration),
    ) -> Result<Started> {
        let mut command = vec![agent.to_string(), "relay".to_string()];
        command.extend(ports.iter().map(u16::to_string));
        let request = ExecRequest {
            command,
            user: Some("0".into()),
            stdin: Some(Vec::new()),
            ..Default::default()
        };
        let started = exec::start_attached(engine, container, &request).await?;
        let Some(input) = started.input else {
            return Err(unavailable(container, "its exec has no stdin".into()));
        };
        // Its stdin's end, when the writer goes, ends the relay.
        let channel = AgentChannel {
            input,
            output: exec_output(started.output),
            stop: Box::new(|| {}),
        };
        Self::start_on(channel, container, limits).await
    }

    /// The relay's writer and reader on `channel`, and its `Welcome`.
    async fn start_on(
        channel: AgentChannel,
        container: &str,
        (max_streams, idle): (usize, Duration),
    ) -> Result<Started> {
        let AgentChannel {
            input,
            output,
            stop,
        } = channel;
        let (outgoing, queue) = mpsc::channel::<Vec<u8>>(SEND_QUEUE);
        let (offer, offers) = mpsc::channel::<Vec<u8>>(1);
        let (writer_line, writer_handover) = oneshot::channel();
        let (reader_line, reader_handover) = oneshot::channel();
        let outbound = Outbound {
            queue,
            offer: offers,
            handover: writer_handover,
        };
        let writer = tokio::spawn(write_frames(input, outbound));
        let channel = Arc::new(RelayChannel::new(outgoing, container, (max_streams, idle)));
        *channel.stop.lock().unwrap() = Some(stop);
        channel.tasks.lock().unwrap().push(writer.abort_handle());
        let (welcome_tx, welcome_rx) = oneshot::channel();
        channel.dials.lock().unwrap().insert(CONTROL, welcome_tx);
        let (accepted_tx, accepted) = mpsc::unbounded_channel();
        let frames = AgentFrames::new(output);
        let stderr = frames.stderr.clone();
        let reader = tokio::spawn(serve_frames(
            frames,
            reader_handover,
            channel.clone(),
            accepted_tx,
        ));
        channel.tasks.lock().unwrap().push(reader.abort_handle());
        let switch = Switch {
            offer,
            writer: writer_line,
            reader: reader_line,
        };
        match channel.handshake(welcome_rx, &stderr).await {
            Ok(welcome) => Ok((channel, accepted, switch, welcome)),
            Err(e) => {
                channel.close();
                Err(e)
            }
        }
    }

    /// Offers the line to the relay that just said `Welcome`; `Err` only when it took a
    /// line that is not this host's. `line` says which way its frames travel.
    async fn take_line(
        &self,
        engine: &Engine,
        switch: Switch,
        welcomed: Welcomed,
    ) -> std::result::Result<(), String> {
        // The answer to `Line` is routed back as a dial's.
        let id = self.next_dial.fetch_add(1, Ordering::Relaxed) & !AGENT_STREAM;
        let (answer_tx, answer) = oneshot::channel();
        self.dials.lock().unwrap().insert(id, answer_tx);
        let taken = switch_to_line(engine, &self.container(), switch, welcomed, id, answer).await;
        self.dials.lock().unwrap().remove(&id);
        *self.line.lock().unwrap() = taken?;
        Ok(())
    }

    /// Says `Hello`; the relay's protocol version and pid.
    async fn handshake(
        &self,
        welcome: oneshot::Receiver<Message>,
        stderr: &Mutex<Vec<u8>>,
    ) -> Result<Welcomed> {
        let hello = encode(CONTROL, &Message::Hello { version: VERSION });
        let _ = self.outgoing.send(hello).await;
        let said = || {
            String::from_utf8_lossy(&stderr.lock().unwrap())
                .trim()
                .to_string()
        };
        match tokio::time::timeout(WELCOME_WAIT, welcome).await {
            Ok(Ok(Message::Welcome { version, pid })) if version_accepted(version) => {
                Ok(Welcomed { version, pid })
            }
            Ok(Ok(other)) => Err(unavailable(
                &self.container(),
                format!("answered {other:?}"),
            )),
            Ok(Err(_)) => Err(unavailable(
                &self.container(),
                format!("exited: {}", said()),
            )),
            Err(_) => Err(unavailable(&self.container(), "did not answer".into())),
        }
    }
}

/// A started relay kept on its exec stream for good, `why` kept as the reason.
fn without_line(
    (relay, accepted, switch, _): Started,
    why: String,
) -> (Arc<RelayChannel>, mpsc::UnboundedReceiver<Accepted>) {
    let _ = switch.writer.send(None);
    *relay.line.lock().unwrap() = Line::Exec(why);
    (relay, accepted)
}

/// Hands every frame of the relay to the channel until the relay ends (its exec, or its
/// line), then ends the channel.
async fn serve_frames(
    frames: AgentFrames,
    handover: oneshot::Receiver<LineFrames>,
    channel: Arc<RelayChannel>,
    accepted: mpsc::UnboundedSender<Accepted>,
) {
    let dispatch = |id, message| channel.dispatch(id, message, &accepted);
    if let Some(e) = read_frames(frames, handover, dispatch).await {
        tracing::warn!("network relay in '{}': {e}", channel.container());
    }
    channel.close();
}
