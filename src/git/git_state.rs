//! The rules by which Magenta's git client turns git's output into a `GitState`, as pure
//! functions of each command's exit code and output. `git status --porcelain` is counted
//! as it streams, so a tree with millions of changes costs no more memory than a small one.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitState {
    pub repo_root: String,
    /// `None` on a detached HEAD.
    pub branch: Option<String>,
    /// Empty in a repository without commits.
    pub head_sha: String,
    pub head_subject: String,
    pub staged_count: u32,
    pub unstaged_count: u32,
    pub untracked_count: u32,
}

/// `git rev-parse --show-toplevel`: the repository's root, `None` outside a repository.
pub fn repo_root(exit_code: i64, stdout: &[u8]) -> Option<String> {
    (exit_code == 0).then(|| String::from_utf8_lossy(stdout).trim().to_string())
}

/// `git symbolic-ref --short -q HEAD`: the branch, `None` when HEAD is detached.
pub fn branch(exit_code: i64, stdout: &[u8]) -> Option<String> {
    let name = String::from_utf8_lossy(stdout).trim().to_string();
    (exit_code == 0 && !name.is_empty()).then_some(name)
}

/// `git log -1 --format=%H%x00%s`: HEAD's sha and subject, both empty when it failed (a
/// repository without commits).
pub fn head(exit_code: i64, stdout: &[u8]) -> (String, String) {
    if exit_code != 0 {
        return (String::new(), String::new());
    }
    let text = String::from_utf8_lossy(stdout);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    match text.split_once('\0') {
        Some((sha, subject)) => (sha.to_string(), subject.to_string()),
        None => (text.to_string(), String::new()),
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusCounts {
    pub staged: u32,
    pub unstaged: u32,
    pub untracked: u32,
}

/// Counts `git status --porcelain` lines as their bytes arrive, in chunks cut anywhere.
/// A line of at least two bytes starting `??` is untracked; otherwise its first byte (the
/// index) other than a space counts it staged, its second (the work tree) unstaged. Each
/// porcelain line starts with those two ASCII status letters, so bytes and characters
/// agree there.
#[derive(Debug, Default)]
pub struct StatusCounter {
    counts: StatusCounts,
    /// The current line's first two bytes and how many of them have arrived.
    head: [u8; 2],
    seen: usize,
}

impl StatusCounter {
    pub fn push(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if byte == b'\n' {
                self.end_line();
            } else {
                if self.seen < 2 {
                    self.head[self.seen] = byte;
                }
                self.seen = self.seen.saturating_add(1);
            }
        }
    }

    /// The counts, with a last line that has no newline counted too.
    pub fn finish(mut self) -> StatusCounts {
        self.end_line();
        self.counts
    }

    fn end_line(&mut self) {
        if self.seen >= 2 {
            let counts = &mut self.counts;
            match self.head {
                [b'?', b'?'] => counts.untracked = counts.untracked.saturating_add(1),
                [index, tree] => {
                    if index != b' ' {
                        counts.staged = counts.staged.saturating_add(1);
                    }
                    if tree != b' ' {
                        counts.unstaged = counts.unstaged.saturating_add(1);
                    }
                }
            }
        }
        self.seen = 0;
    }
}

/// `git status --porcelain` counted in one piece.
pub fn status_counts(stdout: &[u8]) -> StatusCounts {
    let mut counter = StatusCounter::default();
    counter.push(stdout);
    counter.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "M  staged.ts\n M unstaged.ts\nMM both.ts\n?? new.ts\n";

    #[test]
    fn the_example_state() {
        let root = repo_root(0, b"/repo\n");
        let (head_sha, head_subject) = head(0, "abc123def456\u{0}Initial commit\n".as_bytes());
        let counts = status_counts(STATUS.as_bytes());
        let state = GitState {
            repo_root: root.unwrap(),
            branch: branch(0, b"main\n"),
            head_sha,
            head_subject,
            staged_count: counts.staged,
            unstaged_count: counts.unstaged,
            untracked_count: counts.untracked,
        };
        let expected = GitState {
            repo_root: "/repo".into(),
            branch: Some("main".into()),
            head_sha: "abc123def456".into(),
            head_subject: "Initial commit".into(),
            staged_count: 2,
            unstaged_count: 2,
            untracked_count: 1,
        };
        assert_eq!(state, expected);
    }

    #[test]
    fn outside_a_repository_there_is_no_root() {
        assert_eq!(repo_root(128, b""), None);
        assert_eq!(repo_root(0, b"  /a b/c \n"), Some("/a b/c".into()));
    }

    #[test]
    fn a_branch_needs_exit_zero_and_a_name() {
        assert_eq!(branch(1, b""), None);
        assert_eq!(branch(0, b" \n"), None);
        assert_eq!(branch(1, b"main\n"), None);
        assert_eq!(branch(0, b"feature/x\n"), Some("feature/x".into()));
    }

    #[test]
    fn head_splits_at_the_first_nul_only() {
        let (sha, subject) = head(0, b"abc\0a\0b\n");
        assert_eq!((sha.as_str(), subject.as_str()), ("abc", "a\0b"));
        let (sha, subject) = head(0, b"abc\n");
        assert_eq!((sha.as_str(), subject.as_str()), ("abc", ""));
        let (sha, subject) = head(0, b"abc\0subject\n\n");
        assert_eq!((sha.as_str(), subject.as_str()), ("abc", "subject\n"));
        let (sha, subject) = head(128, b"abc\0subject\n");
        assert_eq!((sha.as_str(), subject.as_str()), ("", ""));
    }

    #[test]
    fn status_counts_any_chunking_alike() {
        let whole = status_counts(STATUS.as_bytes());
        for size in 1..STATUS.len() {
            let mut counter = StatusCounter::default();
            for chunk in STATUS.as_bytes().chunks(size) {
                counter.push(chunk);
            }
            assert_eq!(counter.finish(), whole, "chunks of {size}");
        }
    }

    #[test]
    fn status_skips_short_lines_and_counts_an_unterminated_last_one() {
        let counts = status_counts(b"\nM\n?\nA  a\n R b -> c\nD  d");
        let expected = StatusCounts {
            staged: 2,
            unstaged: 1,
            untracked: 0,
        };
        assert_eq!(counts, expected);
        assert_eq!(status_counts(b""), StatusCounts::default());
        assert_eq!(status_counts(b"??").untracked, 1);
        assert_eq!(status_counts(b"?x y\n").staged, 1);
        assert_eq!(status_counts(b"?x y\n").unstaged, 1);
    }
}
