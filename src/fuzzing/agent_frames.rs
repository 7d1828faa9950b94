//! The host's reader of an agent's frames (`FrameBuffer`, `decode`): every frame that
//! decodes encodes back to the very bytes it came from; the frames (and the first error)
//! are the same however the stream is cut; what the buffer holds stays within its bound.

use container_isolation_agent::protocol::{
    decode, encode, FrameBuffer, Message, ProtocolError, MAX_FRAME,
};

use super::rng::{pieces, Rng};

type Frame = Result<(u32, Message), ProtocolError>;

/// The frames `data` gives when it arrives in `pieces`, up to and including the first
/// error (after which the host drops the connection).
fn frames_of(pieces: &[&[u8]]) -> Vec<Frame> {
    let mut buffer = FrameBuffer::default();
    let mut got = Vec::new();
    for piece in pieces {
        buffer.push(piece);
        loop {
            let next = buffer.next_frame();
            assert!(
                buffer.held() <= 2 * buffer.pending(),
                "the buffer holds {} bytes for {} pending",
                buffer.held(),
                buffer.pending()
            );
            match next {
                None => break,
                Some(Err(e)) => {
                    got.push(Err(e));
                    return got;
                }
                Some(frame) => got.push(frame),
            }
        }
        assert!(
            buffer.pending() < 4 + MAX_FRAME,
            "{} bytes pending and no frame",
            buffer.pending()
        );
    }
    got
}

pub fn check_agent_frames(data: &[u8]) {
    let whole = frames_of(&[data]);
    // Each frame that decoded is its bytes in the stream, encoded again.
    let mut at = 0;
    for frame in &whole {
        let Ok((id, message)) = frame else { break };
        let length = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        let raw = &data[at..at + 4 + length];
        assert_eq!(encode(*id, message), raw, "encode(decode(frame)) differs");
        assert_eq!(decode(&raw[4..]).as_ref(), Ok(&(*id, message.clone())));
        at += 4 + length;
    }
    let mut rng = Rng::from_bytes(data);
    for single in [true, false, false, false] {
        let cuts = rng.cuts(data.len(), single);
        assert_eq!(
            frames_of(&pieces(data, &cuts)),
            whole,
            "a different outcome when cut at {cuts:?}"
        );
    }
}
