//! The lines of a file's content that a `LinePattern` matches, up to a count and until a
//! deadline. The lazy DFA is stepped byte by byte: a byte whose transition is known costs a
//! table lookup, one whose state must be made costs time in the size of the automaton (up
//! to its bound), and each such step looks at the clock, as does every 1024th line; so a
//! search stops near its deadline even within one long line, whatever the pattern.

use std::time::Instant;

use regex_automata::hybrid::dfa::Cache;
use regex_automata::hybrid::LazyStateID;
use regex_automata::Input;

use super::LinePattern;
use crate::error::{Error, ErrorCode, Result};

/// A matching line is shown up to this many characters, then `…`.
pub const MAX_LINE_SHOWN: usize = 500;

/// A matching line: its number (from 1) and its text, lossily decoded as UTF-8 and cut.
#[derive(Debug, PartialEq, Eq)]
pub struct LineMatch {
    pub line: u32,
    pub text: String,
}

/// The matching lines found, and whether the whole content was searched (false: stopped at
/// the deadline; reaching `max` matches counts as complete).
#[derive(Debug, PartialEq, Eq)]
pub struct LineScan {
    pub matches: Vec<LineMatch>,
    pub complete: bool,
}

struct PastDeadline;

impl LinePattern {
    /// The lines of `content` (split at `\n`; the piece after a final `\n` is a line too, as
    /// JavaScript's split reads it) that the pattern matches somewhere, at most `max`.
    pub fn scan(&self, content: &[u8], max: usize, deadline: Instant) -> Result<LineScan> {
        let mut cache = self.cache();
        let mut matches = Vec::new();
        for (index, line) in content.split(|&b| b == b'\n').enumerate() {
            if matches.len() >= max {
                break;
            }
            let line_matches = if index % 1024 == 0 && Instant::now() >= deadline {
                Err(PastDeadline)
            } else {
                self.is_match(&mut cache, line, deadline)?
            };
            match line_matches {
                Ok(false) => {}
                Ok(true) => matches.push(LineMatch {
                    line: index as u32 + 1,
                    text: shown(line),
                }),
                Err(PastDeadline) => {
                    return Ok(LineScan {
                        matches,
                        complete: false,
                    })
                }
            }
        }
        Ok(LineScan {
            matches,
            complete: true,
        })
    }

    fn is_match(
        &self,
        cache: &mut Cache,
        line: &[u8],
        deadline: Instant,
    ) -> Result<std::result::Result<bool, PastDeadline>> {
        let dfa = &self.dfa;
        let mut sid = dfa
            .start_state_forward(cache, &Input::new(line))
            .map_err(|e| gave_up(&e))?;
        for &byte in line {
            let mut next = if sid.is_tagged() {
                dfa.next_state(cache, sid, byte).map_err(|e| gave_up(&e))?
            } else {
                dfa.next_state_untagged(cache, sid, byte)
            };
            if next.is_tagged() {
                if next.is_unknown() {
                    next = dfa.next_state(cache, sid, byte).map_err(|e| gave_up(&e))?;
                    if Instant::now() >= deadline {
                        return Ok(Err(PastDeadline));
                    }
                }
                if let Some(found) = settled(next)? {
                    return Ok(Ok(found));
                }
            }
            sid = next;
        }
        let end = dfa.next_eoi_state(cache, sid).map_err(|e| gave_up(&e))?;
        Ok(Ok(end.is_match()))
    }
}

/// Whether the search can stop at state `sid`: a match was seen, or none can follow.
fn settled(sid: LazyStateID) -> Result<Option<bool>> {
    if sid.is_match() {
        Ok(Some(true))
    } else if sid.is_dead() {
        Ok(Some(false))
    } else if sid.is_quit() {
        Err(gave_up(&"a byte the automaton cannot decide"))
    } else {
        Ok(None)
    }
}

/// The lazy DFA gave up (it is configured never to, and has no quit bytes).
fn gave_up(why: &dyn std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::LimitExceeded,
        format!("the pattern's automaton gave up on this text: {why}"),
    )
}

fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    match text.char_indices().nth(MAX_LINE_SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.into_owned(),
    }
}
