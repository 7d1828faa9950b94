//! A glob over paths relative to the folder searched: `*` and `?` within one path segment,
//! `**` as a whole segment across segments, `[abc]`/`[!abc]` classes, `{a,b}` alternatives
//! (nested too), `\` escaping the next character; a leading `./` is dropped, and a pattern
//! without `/` matches a file name at any depth (`*.ts`), as .gitignore reads it. globset
//! compiles it to an automaton; the paths are matched one by one until a deadline.

use std::time::Instant;

use globset::{GlobBuilder, GlobMatcher};

use crate::error::{Error, Result};

/// The longest glob taken, in characters.
pub const MAX_GLOB_CHARS: usize = 1000;

/// A compiled glob.
pub struct PathGlob {
    matcher: GlobMatcher,
}

/// Which of the paths given matched, and whether all of them were tried before the deadline.
#[derive(Debug, PartialEq, Eq)]
pub struct PathScan {
    pub indices: Vec<u32>,
    pub complete: bool,
}

impl PathGlob {
    /// `INVALID_ARGUMENT` for a glob over the length bound or one globset cannot read (an
    /// unclosed `{`, a range such as `[z-a]`, a trailing `\`).
    pub fn new(pattern: &str) -> Result<PathGlob> {
        if pattern.chars().count() > MAX_GLOB_CHARS {
            return Err(Error::invalid_argument(format!(
                "a glob pattern is at most {MAX_GLOB_CHARS} characters"
            )));
        }
        let glob = pattern.strip_prefix("./").unwrap_or(pattern);
        let at_any_depth;
        let glob = if glob.contains('/') {
            glob
        } else {
            at_any_depth = format!("**/{glob}");
            &at_any_depth
        };
        let compiled = GlobBuilder::new(glob)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .allow_unclosed_class(true)
            .build()
            .map_err(|e| {
                Error::invalid_argument(format!("glob '{pattern}' is malformed: {}", e.kind()))
            })?;
        Ok(PathGlob {
            matcher: compiled.compile_matcher(),
        })
    }

    pub fn is_match(&self, path: &str) -> bool {
        self.matcher.is_match(path)
    }

    /// The indices of the `paths` that match, tried in order until `deadline`. One path
    /// costs time linear in its length, so the deadline is looked at between paths.
    pub fn scan<S: AsRef<str>>(&self, paths: &[S], deadline: Instant) -> PathScan {
        let mut indices = Vec::new();
        for (i, path) in paths.iter().enumerate() {
            if Instant::now() >= deadline {
                return PathScan {
                    indices,
                    complete: false,
                };
            }
            if self.is_match(path.as_ref()) {
                indices.push(i as u32);
            }
        }
        PathScan {
            indices,
            complete: true,
        }
    }
}
