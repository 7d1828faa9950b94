//! Command output as lines: decoding, splitting and cleaning the byte streams of an exec or a
//! container log.

mod line_decoder;
mod output_line;

pub use line_decoder::{clean_line, strip_ansi, LineDecoder, OutputDecoder};
pub use output_line::{OutputLine, StreamKind};
