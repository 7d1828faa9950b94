//! The agent's input: frames read from the host's stream (stdin, then the direct line). A
//! data frame (`Data`, `Stdin`) whose payload has not all arrived yet is read straight into
//! its own buffer, so a write's bytes are copied once, by the kernel, on their way in; other
//! frames are decoded from a small read-ahead buffer. Lengths are checked before anything is
//! allocated for them: no frame costs more than `MAX_FRAME`.

use std::io::Read;

use container_isolation_agent::protocol::{
    decode, Message, ProtocolError, DATA_HEADER, MAX_FRAME,
};

/// Bytes read ahead at once (small: most of a write's payload bypasses it).
const READ_AHEAD: usize = 16 * 1024;
/// The kinds laid out as a data frame: id, kind, payload length, payload.
const STDIN: u8 = 3;
const DATA: u8 = 64;

pub type Frame = Result<(u32, Message), ProtocolError>;

pub struct FrameIn {
    source: Box<dyn Read + Send>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

fn le32(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(bytes[..4].try_into().unwrap())
}

impl FrameIn {
    pub fn new(source: Box<dyn Read + Send>) -> FrameIn {
        FrameIn {
            source,
            buf: vec![0; READ_AHEAD],
            start: 0,
            end: 0,
        }
    }

    /// Reads from `source` from now on; what was read ahead from the old one comes first.
    pub fn switch(&mut self, source: Box<dyn Read + Send>) {
        self.source = source;
    }

    /// The next frame; `Ok(None)` at the end of the stream (a frame cut short by it
    /// included), an error inside for a malformed frame.
    pub fn next(&mut self) -> std::io::Result<Option<Frame>> {
        loop {
            let pending = &self.buf[self.start..self.end];
            if pending.len() >= 4 {
                let length = le32(pending) as usize;
                if length > MAX_FRAME {
                    let why = format!("a frame of {length} bytes");
                    return Ok(Some(Err(ProtocolError(why))));
                }
                if pending.len() >= 4 + length {
                    let frame = decode(&pending[4..4 + length]);
                    self.start += 4 + length;
                    return Ok(Some(frame));
                }
                if pending.len() >= DATA_HEADER && matches!(pending[8], STDIN | DATA) {
                    return self.data_frame(length);
                }
                if 4 + length > self.buf.len() {
                    self.buf.resize(4 + length, 0);
                }
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Reads more of the stream into the read-ahead buffer; `false` at its end.
    fn fill(&mut self) -> std::io::Result<bool> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        loop {
            match self.source.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// A data frame of `length` whose header has arrived and whose payload has not all:
    /// what was read ahead of the payload, then the rest read straight into it.
    fn data_frame(&mut self, length: usize) -> std::io::Result<Option<Frame>> {
        let pending = &self.buf[self.start..self.end];
        let id = le32(&pending[4..]);
        let kind = pending[8];
        let size = le32(&pending[9..]) as usize;
        if DATA_HEADER - 4 + size != length {
            let why = "a data frame's payload disagrees with its length";
            return Ok(Some(Err(ProtocolError(why.into()))));
        }
        let mut data = Vec::with_capacity(size);
        data.extend_from_slice(&pending[DATA_HEADER..]);
        self.start = self.end;
        let missing = (size - data.len()) as u64;
        // Into the vector's spare room: no zeroing, no copy.
        (&mut self.source).take(missing).read_to_end(&mut data)?;
        if data.len() < size {
            return Ok(None);
        }
        let message = match kind {
            STDIN => Message::Stdin(data),
            _ => Message::Data(data),
        };
        Ok(Some(Ok((id, message))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use container_isolation_agent::protocol::encode;

    /// A source that hands out its bytes `piece` at a time.
    struct Pieces {
        bytes: Vec<u8>,
        at: usize,
        piece: usize,
    }

    impl Read for Pieces {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.piece.min(buf.len()).min(self.bytes.len() - self.at);
            buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn frames(bytes: Vec<u8>, piece: usize) -> Vec<Frame> {
        let source = Pieces {
            bytes,
            at: 0,
            piece,
        };
        let mut input = FrameIn::new(Box::new(source));
        let mut got = Vec::new();
        while let Some(frame) = input.next().unwrap() {
            let broken = frame.is_err();
            got.push(frame);
            if broken {
                break;
            }
        }
        got
    }

    fn sample() -> Vec<(u32, Message)> {
        vec![
            (1, Message::Ping),
            (2, Message::Data((0..300_000).map(|i| i as u8).collect())),
            (3, Message::Stdin(vec![7; 40_000])),
            (2, Message::Data(vec![1; 3])),
            (4, Message::Data(Vec::new())),
            (
                5,
                Message::Names(vec!["x".repeat(50_000), "y".repeat(30_000)]),
            ),
            (2, Message::End),
        ]
    }

    #[test]
    fn frames_arrive_whole_however_the_stream_is_cut() {
        let bytes: Vec<u8> = sample().iter().flat_map(|(i, m)| encode(*i, m)).collect();
        for piece in [1, 5, 13, 4096, 70_000, bytes.len()] {
            let got: Vec<_> = frames(bytes.clone(), piece)
                .into_iter()
                .map(Result::unwrap)
                .collect();
            assert_eq!(got, sample(), "pieces of {piece}");
        }
    }

    #[test]
    fn a_frame_cut_short_by_the_end_is_the_end() {
        let mut bytes = encode(1, &Message::Ping);
        bytes.extend_from_slice(&encode(2, &Message::Data(vec![9; 100_000]))[..50_000]);
        let got = frames(bytes, 4096);
        assert_eq!(got, vec![Ok((1, Message::Ping))]);
    }

    #[test]
    fn lying_lengths_are_errors_before_anything_is_allocated_for_them() {
        let oversized = ((MAX_FRAME + 1) as u32).to_le_bytes().to_vec();
        assert!(frames(oversized, 4096)[0].is_err());
        // A data frame whose payload length is not what its frame length says.
        let mut frame = encode(2, &Message::Data(vec![0; 100_000]));
        frame[9..13].copy_from_slice(&(MAX_FRAME as u32 * 4).to_le_bytes());
        assert!(frames(frame, 4096)[0].is_err());
    }
}
