//! A relay stream against the channel's ends alone: what it reads, what it sends, when it
//! waits for credit, and what its end, abort, idleness and drop tell the agent.

use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use container_isolation_agent::protocol::FrameBuffer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;

struct Ends {
    inbound: mpsc::UnboundedSender<Inbound>,
    shared: Arc<StreamShared>,
    frames: mpsc::Receiver<Vec<u8>>,
    forgotten: Arc<AtomicUsize>,
}

fn stream(idle: Duration) -> (RelayStream, Ends) {
    let (inbound_tx, inbound) = mpsc::unbounded_channel();
    let (outgoing, frames) = mpsc::channel(64);
    let shared = Arc::new(StreamShared::new());
    let forgotten = Arc::new(AtomicUsize::new(0));
    let count = forgotten.clone();
    let stream = RelayStream::new(StreamParts {
        id: 7,
        inbound,
        shared: shared.clone(),
        outgoing,
        idle,
        forget: Box::new(move || {
            count.fetch_add(1, Ordering::SeqCst);
        }),
    });
    let ends = Ends {
        inbound: inbound_tx,
        shared,
        frames,
        forgotten,
    };
    (stream, ends)
}

/// Every frame sent so far, decoded.
fn sent(frames: &mut mpsc::Receiver<Vec<u8>>) -> Vec<Message> {
    let mut buffer = FrameBuffer::default();
    while let Ok(frame) = frames.try_recv() {
        buffer.push(&frame);
    }
    let mut out = Vec::new();
    while let Some(frame) = buffer.next_frame() {
        let (id, message) = frame.unwrap();
        assert_eq!(id, 7);
        out.push(message);
    }
    out
}

const LONG: Duration = Duration::from_secs(60);

#[tokio::test]
async fn reads_pieces_in_order_returns_their_credit_and_ends_with_end() {
    let (mut stream, mut ends) = stream(LONG);
    for piece in [&b"hello "[..], b"world"] {
        ends.shared.pending.fetch_add(piece.len(), Ordering::AcqRel);
        ends.inbound.send(Inbound::Data(piece.to_vec())).unwrap();
    }
    ends.inbound.send(Inbound::End).unwrap();
    let mut all = Vec::new();
    stream.read_to_end(&mut all).await.unwrap();
    assert_eq!(all, b"hello world");
    assert_eq!(ends.shared.pending.load(Ordering::Acquire), 0);
    let credits: u32 = sent(&mut ends.frames)
        .into_iter()
        .map(|m| match m {
            Message::Credit { bytes } => bytes,
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(credits, 11);
}

#[tokio::test]
async fn writes_no_more_than_the_agent_granted_and_waits_for_more() {
    let (mut stream, mut ends) = stream(LONG);
    let big = vec![1u8; RELAY_WINDOW as usize + 1000];
    let writer = tokio::spawn(async move {
        stream.write_all(&big).await.unwrap();
        stream.shutdown().await.unwrap();
        stream
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let first: usize = sent(&mut ends.frames)
        .iter()
        .map(|m| match m {
            Message::Data(d) => d.len(),
            other => panic!("{other:?}"),
        })
        .sum();
    assert_eq!(first, RELAY_WINDOW as usize);
    assert!(!writer.is_finished());
    ends.shared.grant(1000);
    let stream = writer.await.unwrap();
    let rest = sent(&mut ends.frames);
    assert!(matches!(rest.last(), Some(Message::End)), "{rest:?}");
    drop(stream);
    assert_eq!(ends.forgotten.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_abort_fails_a_writer_waiting_for_credit_and_the_reader() {
    let (mut stream, ends) = stream(LONG);
    let writer = tokio::spawn(async move {
        let big = vec![0u8; RELAY_WINDOW as usize * 2];
        let result = stream.write_all(&big).await;
        (result, stream)
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    ends.shared.abort();
    ends.inbound.send(Inbound::Abort).unwrap();
    let (result, mut stream) = writer.await.unwrap();
    assert_eq!(result.unwrap_err().kind(), io::ErrorKind::ConnectionReset);
    let mut byte = [0u8; 1];
    assert!(stream.read(&mut byte).await.is_err());
}

#[tokio::test]
async fn dropped_before_both_ends_it_aborts_and_is_forgotten_once() {
    let (stream, mut ends) = stream(LONG);
    drop(stream);
    assert_eq!(sent(&mut ends.frames), [Message::Abort]);
    assert_eq!(ends.forgotten.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn idle_past_its_bound_it_fails_and_aborts() {
    let (mut stream, mut ends) = stream(Duration::from_millis(50));
    let mut byte = [0u8; 1];
    let err = stream.read(&mut byte).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    drop(stream);
    assert_eq!(sent(&mut ends.frames), [Message::Abort]);
}
