//! A client's glob or regular expression matched against a session's paths and text, as the
//! MCP server's `find_files` and `search_text` take them: with finite automata, in time
//! linear in what is searched (no backtracking), within bounds on what a pattern may compile
//! to, and stopping at a deadline. Both the pattern and the text are hostile input.

mod line_pattern;
mod line_scan;
mod path_glob;
#[cfg(test)]
mod tests;

pub use line_pattern::{LinePattern, MAX_PATTERN_CHARS};
pub use line_scan::{LineMatch, LineScan, MAX_LINE_SHOWN};
pub use path_glob::{PathGlob, PathScan, MAX_GLOB_CHARS};
