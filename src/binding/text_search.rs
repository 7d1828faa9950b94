//! `PathMatcher` and `TextMatcher`: a glob and a regular expression (the MCP server's
//! `find_files` and `search_text` take them from a client) compiled and matched on the
//! blocking pool, off the event loop, each search stopping at the time it is given.

use std::sync::Arc;
use std::time::{Duration, Instant};

use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

use super::error::Outcome;
use crate::error::{Error, ErrorCode, Result};
use crate::text_search::{LinePattern, PathGlob};

/// Options of `TextMatcher.compile`.
#[napi(object, object_to_js = false)]
pub struct TextMatcherOptions {
    /// Match without regard to case (Unicode simple case folding); default false.
    pub ignore_case: Option<bool>,
}

/// What `PathMatcher.matchPaths` found.
#[napi(object)]
pub struct PathMatches {
    /// The indices, ascending, of the paths that match.
    pub indices: Vec<u32>,
    /// False when the time given ran out before every path was tried.
    pub complete: bool,
}

/// A line `TextMatcher.searchLines` found.
#[napi(object)]
pub struct TextLineMatch {
    /// Its number, from 1.
    pub line: u32,
    /// Its text (invalid UTF-8 replaced), cut at 500 characters with `…`.
    pub text: String,
}

/// What `TextMatcher.searchLines` found.
#[napi(object)]
pub struct TextMatches {
    /// The matching lines, in order, at most `maxMatches`.
    pub matches: Vec<TextLineMatch>,
    /// False when the time given ran out before the whole content was searched.
    pub complete: bool,
}

/// A glob over relative paths (`*` and `?` within a segment, `**` as a whole segment across
/// segments, `[abc]`, `[!abc]`, `{a,b}`, `\` escaping; a pattern without `/` matches a name
/// at any depth; a leading `./` is dropped), matched by an automaton in time linear in each
/// path.
#[napi]
pub struct PathMatcher {
    inner: Arc<PathGlob>,
}

#[napi]
impl PathMatcher {
    /// Compiles `pattern` off the event loop; rejects with `INVALID_ARGUMENT` for a glob
    /// over 1000 characters or a malformed one.
    #[napi(ts_return_type = "Promise<PathMatcher>")]
    pub async fn compile(pattern: String) -> Outcome<PathMatcher> {
        off_event_loop(move || PathGlob::new(&pattern))
            .await
            .map(|glob| PathMatcher {
                inner: Arc::new(glob),
            })
            .into()
    }

    /// The indices of the `paths` that match, tried in order off the event loop for at most
    /// `timeoutMs` (then `complete: false`).
    #[napi(ts_return_type = "Promise<PathMatches>")]
    pub async fn match_paths(&self, paths: Vec<String>, timeout_ms: f64) -> Outcome<PathMatches> {
        let glob = self.inner.clone();
        let deadline = deadline_in(timeout_ms);
        off_event_loop(move || {
            let scan = glob.scan(&paths, deadline);
            Ok(PathMatches {
                indices: scan.indices,
                complete: scan.complete,
            })
        })
        .await
        .into()
    }
}

/// A regular expression in Rust regex syntax (no look-around, no backreferences; `\b` is
/// an ASCII word boundary), matched line by line by a lazy DFA: time linear in the text,
/// within bounds on the size of its automaton.
#[napi]
pub struct TextMatcher {
    inner: Arc<LinePattern>,
}

#[napi]
impl TextMatcher {
    /// Compiles `pattern` off the event loop; rejects with `INVALID_ARGUMENT` for a pattern
    /// over 1000 characters, one that is not a regular expression, one using look-around or
    /// a backreference (named in the message), or one whose automaton would pass its bound.
    #[napi(ts_return_type = "Promise<TextMatcher>")]
    pub async fn compile(
        pattern: String,
        options: Option<TextMatcherOptions>,
    ) -> Outcome<TextMatcher> {
        let ignore_case = options.and_then(|o| o.ignore_case).unwrap_or(false);
        off_event_loop(move || LinePattern::new(&pattern, ignore_case))
            .await
            .map(|pattern| TextMatcher {
                inner: Arc::new(pattern),
            })
            .into()
    }

    /// The lines of `content` (split at each newline byte) the pattern matches, at most
    /// `maxMatches`, searched off the event loop for at most `timeoutMs` (then `complete:
    /// false`, with the lines found until then).
    #[napi(ts_return_type = "Promise<TextMatches>")]
    pub async fn search_lines(
        &self,
        content: Buffer,
        max_matches: u32,
        timeout_ms: f64,
    ) -> Outcome<TextMatches> {
        let pattern = self.inner.clone();
        let deadline = deadline_in(timeout_ms);
        off_event_loop(move || {
            let scan = pattern.scan(&content, max_matches as usize, deadline)?;
            Ok(TextMatches {
                matches: scan
                    .matches
                    .into_iter()
                    .map(|m| TextLineMatch {
                        line: m.line,
                        text: m.text,
                    })
                    .collect(),
                complete: scan.complete,
            })
        })
        .await
        .into()
    }
}

/// `timeout_ms` from now; a negative or NaN time is none, an endless one a day.
fn deadline_in(timeout_ms: f64) -> Instant {
    let ms = if timeout_ms.is_nan() {
        0.0
    } else {
        timeout_ms.clamp(0.0, 86_400_000.0)
    };
    Instant::now() + Duration::from_secs_f64(ms / 1000.0)
}

async fn off_event_loop<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        Error::new(
            ErrorCode::LimitExceeded,
            format!("the match stopped unexpectedly: {e}"),
        )
    })?
}
