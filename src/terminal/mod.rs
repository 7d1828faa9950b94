//! Interactive terminals in a container (docs/contract.md §9): a program on a
//! pseudo-terminal, its bytes both ways exactly as written, resized and signalled at any
//! time. Served by the session agent where it runs (its own session and controlling
//! terminal, bounded buffering both ways, nothing left running once it ends); else the
//! engine's own TTY exec.

mod engine_terminal;
mod open_terminal;
mod terminal_request;

pub use open_terminal::{open_terminal, TerminalEvent, TerminalInput, TerminalOutput};
pub use terminal_request::TerminalRequest;
