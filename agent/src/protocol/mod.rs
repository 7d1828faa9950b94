//! The protocol between container-isolation and its agent: frames over the agent's stdin
//! and stdout, many requests in flight at once, data as raw bytes (no base64).
//!
//! A frame is a little-endian `u32` length (of everything after it), a `u32` request id
//! (chosen by the host; replies carry it), a `u8` message kind and the message's fields.
//! Either side treats the other's frames as untrusted: lengths are bounded, every field
//! is checked, and anything malformed is an error, never a panic.
//!
//! The pieces: `message` (what can be said), `codec` (a message as bytes, over the
//! field primitives of `wire`), `frame_buffer` (frames out of a byte stream).

use std::fmt;

mod codec;
mod frame_buffer;
mod message;
mod wire;

#[cfg(test)]
mod tests;

pub use codec::{data_header, decode, encode, output_header, DATA_HEADER, OUTPUT_HEADER};
pub use frame_buffer::FrameBuffer;
pub use message::{Creds, FileKind, Message, Spawn, Stat};

/// The protocol this crate speaks. An agent answers `Hello` with the lower of this and the
/// host's version; a host accepts from `OLDEST_VERSION` up (an agent mounted into a
/// container made before the direct line speaks 2), offers `Line` only from
/// `LINE_VERSION`, and asks for a `Terminal` only from `TERMINAL_VERSION`.
pub const VERSION: u32 = 4;
pub const OLDEST_VERSION: u32 = 2;
pub const LINE_VERSION: u32 = 3;
pub const TERMINAL_VERSION: u32 = 4;
/// Bytes of a terminal's input the host may send before the agent's `Credit` for them.
pub const TERMINAL_INPUT_WINDOW: u32 = 256 * 1024;

/// The version an agent answers a host's `Hello { version: asked }` with.
pub fn agreed_version(asked: u32) -> u32 {
    asked.min(VERSION)
}

/// Whether a host speaks with an agent that answered `version`.
pub fn version_accepted(version: u32) -> bool {
    (OLDEST_VERSION..=VERSION).contains(&version)
}
/// The largest frame either side accepts (the length field's value).
pub const MAX_FRAME: usize = 1 << 20;
/// The data carried by one `Data`/`Output`/`Stdin` frame at most.
pub const CHUNK: usize = 256 * 1024;
/// Id of the connection's own messages (`Hello`).
pub const CONTROL: u32 = 0;
/// Relay streams the agent opens (accepted connections) have this bit set in their id;
/// those the host opens (`Dial`) do not, so neither side can pick the other's.
pub const AGENT_STREAM: u32 = 1 << 31;
/// Bytes of one relay stream either side may send before the other's `Credit`.
pub const RELAY_WINDOW: u32 = 512 * 1024;
/// The data carried by one relay `Data` frame at most.
pub const RELAY_CHUNK: usize = 64 * 1024;
/// Bytes of replies (see `reply_cost`) the agent may send for one request before the host's
/// `Credit`: a consumer that falls behind holds up its own request, never the connection.
pub const REPLY_WINDOW: u32 = 4 << 20;

/// What a reply costs against its request's window: the data it carries (`Output`, `Data`,
/// `Names`); every other reply is free.
pub fn reply_cost(message: &Message) -> u32 {
    let bytes = match message {
        Message::Output { data, .. } | Message::Data(data) => data.len(),
        Message::Names(names) => names.iter().map(|n| 4 + n.len()).sum(),
        _ => 0,
    };
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "agent protocol: {}", self.0)
    }
}

impl std::error::Error for ProtocolError {}

fn bad(what: impl Into<String>) -> ProtocolError {
    ProtocolError(what.into())
}
