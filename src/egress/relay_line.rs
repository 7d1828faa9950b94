//! A just-started relay moved onto the direct line: offered it after its `Welcome` (through
//! `crate::agent::offer_line`, the agent's listener and checks), and, once it is admitted,
//! its frames switched over (`relay_transport`'s writer and reader get the socket's halves);
//! else the reason the exec stream stays.

use container_isolation_agent::protocol::{Message, LINE_VERSION};
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::{mpsc, oneshot};

use crate::agent::{offer_line, Line, LineFrames, LineRequest, NoLine};
use crate::engine::Engine;

/// Where a just-started relay's frames switch to the line.
pub struct Switch {
    /// Towards the writer, which sends the offer and then waits for `writer`.
    pub offer: mpsc::Sender<Vec<u8>>,
    pub writer: oneshot::Sender<Option<OwnedWriteHalf>>,
    pub reader: oneshot::Sender<LineFrames>,
}

/// What the relay said in its `Welcome`.
pub struct Welcomed {
    pub version: u32,
    pub pid: u32,
}

/// Offers the line of `container` to the relay that said `welcomed`, under request `id`
/// whose answer arrives on `answer`. Which way its frames travel from now on, or, as an
/// error, why it must be started again (it took a line that is not this host's).
pub async fn switch_to_line(
    engine: &Engine,
    container: &str,
    switch: Switch,
    welcomed: Welcomed,
    id: u32,
    answer: oneshot::Receiver<Message>,
) -> Result<Line, String> {
    let offered = match welcomed.version >= LINE_VERSION {
        true => {
            let request = LineRequest {
                id,
                answer: async { answer.await.ok() },
                outgoing: &switch.offer,
                agent_pid: welcomed.pid,
            };
            offer_line(engine, container, request).await
        }
        false => Err(NoLine {
            why: format!(
                "the relay speaks protocol {}, from before the direct line",
                welcomed.version
            ),
            broken: false,
        }),
    };
    match offered {
        Ok(stream) => {
            let (read, write) = stream.into_split();
            let handed = switch.writer.send(Some(write)).is_ok()
                && switch.reader.send(LineFrames::new(read)).is_ok();
            match handed {
                true => Ok(Line::Direct),
                false => Err("the relay ended while the line was handed over".into()),
            }
        }
        Err(NoLine { why, broken: true }) => Err(why),
        Err(NoLine { why, .. }) => {
            tracing::info!("network relay in '{container}': no direct line: {why}");
            let _ = switch.writer.send(None);
            Ok(Line::Exec(why))
        }
    }
}
