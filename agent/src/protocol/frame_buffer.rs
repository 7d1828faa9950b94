//! Collects frames from a byte stream that arrives in arbitrary pieces, bounding each
//! frame's length before waiting for its bytes.

use super::{bad, decode, Message, ProtocolError, MAX_FRAME};

/// Collects frames from a byte stream that arrives in arbitrary pieces.
#[derive(Default)]
pub struct FrameBuffer {
    buf: Vec<u8>,
    start: usize,
}

impl FrameBuffer {
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes held: those not yet taken as frames and any already taken it keeps (never
    /// more than as many again).
    pub fn held(&self) -> usize {
        self.buf.len()
    }

    /// Bytes pushed and not yet taken as frames.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }

    /// The next whole frame, `None` until one has arrived; an oversized length is an error.
    pub fn next_frame(&mut self) -> Option<Result<(u32, Message), ProtocolError>> {
        let pending = &self.buf[self.start..];
        if pending.len() < 4 {
            return None;
        }
        let length = u32::from_le_bytes(pending[..4].try_into().unwrap()) as usize;
        if length > MAX_FRAME {
            return Some(Err(bad(format!("a frame of {length} bytes"))));
        }
        if pending.len() < 4 + length {
            return None;
        }
        let frame = decode(&pending[4..4 + length]);
        self.start += 4 + length;
        if self.start > self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        Some(frame)
    }
}
