//! The channel's stream accounting against what an agent may send: `Accepted` again for a
//! stream it has, for an id of the host's, frames for ids never opened, past the budget.

use container_isolation_agent::protocol::FrameBuffer;
use tokio::io::AsyncReadExt;

use super::*;

const AGENT: u32 = AGENT_STREAM | 5;

struct Agent {
    channel: Arc<RelayChannel>,
    frames: mpsc::Receiver<Vec<u8>>,
    accepted_tx: mpsc::UnboundedSender<Accepted>,
    accepted: mpsc::UnboundedReceiver<Accepted>,
}

impl Agent {
    fn new(max_streams: usize) -> Agent {
        let (outgoing, frames) = mpsc::channel(64);
        let limits = (max_streams, Duration::from_secs(60));
        let (accepted_tx, accepted) = mpsc::unbounded_channel();
        Agent {
            channel: Arc::new(RelayChannel::new(outgoing, "c", limits)),
            frames,
            accepted_tx,
            accepted,
        }
    }

    fn says(&self, id: u32, message: Message) {
        self.channel.dispatch(id, message, &self.accepted_tx);
    }

    /// The stream the host handed out for the last `Accepted`, if it did.
    fn handed_out(&mut self) -> Option<RelayStream> {
        self.accepted.try_recv().ok().map(|a| a.stream)
    }

    /// Every frame the host sent the agent so far, decoded.
    fn sent(&mut self) -> Vec<(u32, Message)> {
        let mut buffer = FrameBuffer::default();
        while let Ok(frame) = self.frames.try_recv() {
            buffer.push(&frame);
        }
        std::iter::from_fn(|| buffer.next_frame().map(Result::unwrap)).collect()
    }
}

#[tokio::test]
async fn accepted_again_for_an_open_stream_opens_nothing_and_ends_that_stream() {
    let mut agent = Agent::new(2);
    agent.says(AGENT, Message::Accepted { listener: 0 });
    let mut first = agent.handed_out().expect("a stream for the first Accepted");
    assert_eq!(agent.channel.open_streams(), 1);
    agent.says(AGENT, Message::Accepted { listener: 1 });
    assert!(agent.handed_out().is_none(), "a second stream under one id");
    assert_eq!(agent.channel.open_streams(), 1);
    assert_eq!(agent.sent(), [(AGENT, Message::Abort)]);
    let mut read = Vec::new();
    assert!(first.read_to_end(&mut read).await.is_err());
    drop(first);
    assert_eq!(agent.channel.open_streams(), 0);
    // The whole budget is there again.
    let mut held = Vec::new();
    for n in 0..2 {
        agent.says(AGENT_STREAM | (10 + n), Message::Accepted { listener: 0 });
        held.push(agent.handed_out().expect("a stream within the budget"));
    }
    assert_eq!(agent.channel.open_streams(), 2);
}

#[tokio::test]
async fn frames_for_ids_never_opened_change_no_count() {
    let mut agent = Agent::new(1);
    let dialled = agent.channel.open_stream(3).expect("the host's own stream");
    agent.says(3, Message::Accepted { listener: 0 });
    assert!(agent.handed_out().is_none(), "Accepted under the host's id");
    for id in [AGENT, AGENT_STREAM | 6, 4] {
        agent.says(id, Message::Data(b"x".to_vec()));
        agent.says(id, Message::Credit { bytes: 1 });
        agent.says(id, Message::End);
        agent.says(id, Message::Abort);
    }
    assert_eq!(agent.channel.open_streams(), 1);
    assert!(agent.sent().is_empty());
    agent.says(AGENT, Message::Accepted { listener: 0 });
    assert!(agent.handed_out().is_none(), "past the budget");
    assert_eq!(agent.sent(), [(AGENT, Message::Abort)]);
    drop(dialled);
    agent.sent();
    assert_eq!(agent.channel.open_streams(), 0);
    agent.says(AGENT, Message::Accepted { listener: 0 });
    let accepted = agent.handed_out();
    assert!(accepted.is_some());
    assert_eq!(agent.channel.open_streams(), 1);
    agent.channel.close();
    assert_eq!(agent.channel.open_streams(), 0);
    drop(accepted);
    assert_eq!(agent.channel.open_streams(), 0);
}
