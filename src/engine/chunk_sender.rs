//! A request body written by a blocking tar builder and streamed to the engine: an
//! `io::Write` into a bounded channel of chunks, so memory stays at a few chunks whatever
//! the archive's size.

use std::io::Write;

use bytes::Bytes;
use futures_util::Stream;
use tokio::sync::mpsc;

const CHUNK: usize = 256 * 1024;
const CHUNKS_IN_FLIGHT: usize = 4;

/// The writing side; fails once the receiving side (the request) is gone.
pub struct ChunkSender {
    buffer: Vec<u8>,
    sender: mpsc::Sender<Bytes>,
}

/// A writer for a blocking task, and the body stream that carries what it writes.
pub fn chunk_channel() -> (
    ChunkSender,
    impl Stream<Item = Bytes> + Send + Unpin + 'static,
) {
    let (sender, mut receiver) = mpsc::channel::<Bytes>(CHUNKS_IN_FLIGHT);
    let writer = ChunkSender {
        buffer: Vec::with_capacity(CHUNK),
        sender,
    };
    let body = futures_util::stream::poll_fn(move |cx| receiver.poll_recv(cx));
    (writer, body)
}

impl ChunkSender {
    fn send(&mut self) -> std::io::Result<()> {
        let chunk = Bytes::from(std::mem::replace(
            &mut self.buffer,
            Vec::with_capacity(CHUNK),
        ));
        self.sender
            .blocking_send(chunk)
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
    }
}

impl Write for ChunkSender {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(data);
        if self.buffer.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.buffer.is_empty() {
            self.send()?;
        }
        Ok(())
    }
}
