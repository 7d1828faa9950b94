//! container-isolation's agent: one process per container and host process, started by one
//! exec, which runs commands (each under its own reaper, so that every descendant can be
//! found and killed) and file operations (as the caller's user) for the host, over framed
//! stdin/stdout. The protocol, and the names temporary files carry (`temp_names`), are
//! shared with the host side.

pub mod protocol;
pub mod temp_names;
