//! A regular expression as `search_text` takes it, in the syntax of Rust's `regex` crate,
//! compiled by that crate's own engine to a lazy DFA: regex-syntax parses it, a Thompson NFA
//! is built within a size bound, and the DFA's states are made as the text needs them, in a
//! cache of bounded size. No look-around and no backreferences (a DFA has neither), refused
//! by name. `\b` and its kin are ASCII word boundaries, as in JavaScript (a lazy DFA cannot
//! decide a Unicode one); classes such as `\w` stay Unicode.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson::{self, WhichCaptures};
use regex_syntax::ast::ErrorKind as SyntaxErrorKind;
use regex_syntax::hir::{Hir, HirKind, Look};

use crate::error::{Error, Result};

/// The longest pattern taken, in characters.
pub const MAX_PATTERN_CHARS: usize = 1000;
/// The heap a pattern's NFA may take (the `regex` crate's `size_limit`): `\w` alone takes
/// some 18 KB of it, so `\w{200}` fits and `\w{300}` does not.
const NFA_BYTES: usize = 4 << 20;
/// The lazy DFA's cache of states (the `regex` crate's `dfa_size_limit`): cleared and
/// filled again when full, never grown.
const DFA_CACHE_BYTES: usize = 4 << 20;
/// How deeply groups and repetitions may nest.
const NEST_LIMIT: u32 = 100;

/// A compiled pattern, matched against one line at a time (`LinePattern::scan`).
pub struct LinePattern {
    pub(super) dfa: DFA,
}

impl LinePattern {
    /// `INVALID_ARGUMENT` for a pattern over the length bound, one that is not a regular
    /// expression, one that uses look-around or a backreference (each named), and one whose
    /// automaton would be larger than the bound.
    pub fn new(pattern: &str, ignore_case: bool) -> Result<LinePattern> {
        if pattern.chars().count() > MAX_PATTERN_CHARS {
            return Err(Error::invalid_argument(format!(
                "a pattern is at most {MAX_PATTERN_CHARS} characters"
            )));
        }
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(ignore_case)
            .nest_limit(NEST_LIMIT)
            .build()
            .parse(pattern)
            .map_err(syntax_error)?;
        let hir = if hir.properties().look_set().contains_word_unicode() {
            ascii_word_boundaries(hir)
        } else {
            hir
        };
        let nfa = thompson::Compiler::new()
            .configure(
                thompson::Config::new()
                    .nfa_size_limit(Some(NFA_BYTES))
                    .which_captures(WhichCaptures::None),
            )
            .build_from_hir(&hir)
            .map_err(|e| match e.size_limit() {
                Some(limit) => too_large(limit),
                None => Error::invalid_argument(format!("pattern cannot be compiled: {e}")),
            })?;
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .cache_capacity(DFA_CACHE_BYTES)
                    .minimum_cache_clear_count(None),
            )
            .build_from_nfa(nfa)
            .map_err(|_| too_large(DFA_CACHE_BYTES))?;
        Ok(LinePattern { dfa })
    }

    /// A cache for one search at a time (`scan` takes one of its own).
    pub(super) fn cache(&self) -> Cache {
        self.dfa.create_cache()
    }
}

fn too_large(limit: usize) -> Error {
    Error::invalid_argument(format!(
        "pattern compiles to an automaton larger than {} MiB: make it smaller (fewer or smaller counted repetitions such as \\w{{300}})",
        limit >> 20
    ))
}

const LINEAR: &str = "this search matches in linear time, with Rust regex syntax";

fn syntax_error(err: regex_syntax::Error) -> Error {
    let (what, column) = match &err {
        regex_syntax::Error::Parse(e) => match e.kind() {
            SyntaxErrorKind::UnsupportedLookAround => {
                return Error::invalid_argument(format!(
                    "pattern uses look-around ((?=…), (?!…), (?<=…), (?<!…)), which is not supported: {LINEAR}"
                ))
            }
            SyntaxErrorKind::UnsupportedBackreference => {
                return Error::invalid_argument(format!(
                    "pattern uses a backreference (such as \\1), which is not supported: {LINEAR}"
                ))
            }
            kind => (kind.to_string(), e.span().start.column),
        },
        regex_syntax::Error::Translate(e) => (e.kind().to_string(), e.span().start.column),
        other => (other.to_string(), 0),
    };
    let at = if column > 0 {
        format!(" (at character {column})")
    } else {
        String::new()
    };
    Error::invalid_argument(format!(
        "pattern is not a regular expression in Rust regex syntax: {what}{at}"
    ))
}

/// `hir` with each Unicode word boundary replaced by the ASCII one.
fn ascii_word_boundaries(hir: Hir) -> Hir {
    match hir.into_kind() {
        HirKind::Look(look) => Hir::look(ascii_look(look)),
        HirKind::Repetition(mut rep) => {
            rep.sub = Box::new(ascii_word_boundaries(*rep.sub));
            Hir::repetition(rep)
        }
        HirKind::Capture(cap) => ascii_word_boundaries(*cap.sub),
        HirKind::Concat(subs) => Hir::concat(subs.into_iter().map(ascii_word_boundaries).collect()),
        HirKind::Alternation(subs) => {
            Hir::alternation(subs.into_iter().map(ascii_word_boundaries).collect())
        }
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(literal) => Hir::literal(literal.0),
        HirKind::Class(class) => Hir::class(class),
    }
}

fn ascii_look(look: Look) -> Look {
    match look {
        Look::WordUnicode => Look::WordAscii,
        Look::WordUnicodeNegate => Look::WordAsciiNegate,
        Look::WordStartUnicode => Look::WordStartAscii,
        Look::WordEndUnicode => Look::WordEndAscii,
        Look::WordStartHalfUnicode => Look::WordStartHalfAscii,
        Look::WordEndHalfUnicode => Look::WordEndHalfAscii,
        other => other,
    }
}
