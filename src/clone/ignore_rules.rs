//! Ignore rules held in memory, never written: the library's defaults (what
//! `CloneManager`'s initialisation writes into a project's new `.gitignore`) and a
//! folder's own `.gitignore` files, each rewritten relative to the folder's root so that
//! libgit2's internal rules, where the last match wins, give them git's meaning: a rule of
//! `dir/.gitignore` applies below `dir` only, and a deeper file's rules win over a
//! shallower one's when they are added after it.

use std::ffi::CString;

use git2::{Binding, Repository};

/// The `.gitignore` a project without one gets when it is initialised, and the rules a
/// snapshot applies in memory under the folder's own.
pub const DEFAULT_GITIGNORE: &str =
    "node_modules/\n.DS_Store\n*.log\n.env\n.env.*\ntarget/\ndist/\n__pycache__/\n";

/// `name` as literal text in a pattern: glob characters escaped, a newline (which no rule
/// can hold) matched by `?`.
fn escape_into(out: &mut Vec<u8>, name: &[u8]) {
    for &b in name {
        match b {
            b'\\' | b'*' | b'?' | b'[' | b']' => out.extend_from_slice(&[b'\\', b]),
            b'\n' | b'\r' => out.push(b'?'),
            _ => out.push(b),
        }
    }
}

/// One line of `dir/.gitignore` as a rule of the root's; `None` for a blank line or a
/// comment.
fn rooted_line(dir: &[u8], line: &[u8]) -> Option<Vec<u8>> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() || line.starts_with(b"#") {
        return None;
    }
    let (negated, pattern) = match line.strip_prefix(b"!") {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (directory_only, body) = match pattern.strip_suffix(b"/") {
        Some(body) => (true, body),
        None => (false, pattern),
    };
    if body.is_empty() || body.iter().all(|b| *b == b'/') {
        return None;
    }
    let mut out = Vec::with_capacity(dir.len() + body.len() + 8);
    if negated {
        out.push(b'!');
    }
    if matches!(dir.first(), Some(b'!' | b'#')) {
        out.push(b'\\');
    }
    escape_into(&mut out, dir);
    if body.contains(&b'/') {
        // Anchored to the file's directory, as git anchors a pattern with a slash.
        out.push(b'/');
        out.extend_from_slice(body.strip_prefix(b"/").unwrap_or(body));
    } else {
        // A bare name matches at any depth below the file's directory.
        out.extend_from_slice(b"/**/");
        out.extend_from_slice(body);
    }
    if directory_only {
        out.push(b'/');
    }
    Some(out)
}

/// The rules of the `.gitignore` in `dir` (relative to the root, slash-separated, empty
/// for the root itself), as rules of the root's.
pub fn rooted_rules(dir: &[u8], text: &[u8]) -> Vec<u8> {
    if dir.is_empty() {
        return text.to_vec();
    }
    let mut out = Vec::with_capacity(text.len() * 2);
    for line in text.split(|b| *b == b'\n') {
        if let Some(rule) = rooted_line(dir, line) {
            out.extend_from_slice(&rule);
            out.push(b'\n');
        }
    }
    out
}

/// Adds `rules` (a `.gitignore`'s bytes, of the root) to the repository's internal rules,
/// which live as long as this handle and reach no file. A line holding a NUL is dropped.
pub fn add_rules(repo: &Repository, rules: &[u8]) -> Result<(), git2::Error> {
    let clean: Vec<u8> = rules
        .split(|b| *b == b'\n')
        .filter(|line| !line.contains(&0))
        .flat_map(|line| line.iter().copied().chain(std::iter::once(b'\n')))
        .collect();
    let text = CString::new(clean).map_err(|_| git2::Error::from_str("a NUL in ignore rules"))?;
    // SAFETY: a live repository handle and a NUL-terminated string libgit2 only reads.
    let rc = unsafe { libgit2_sys::git_ignore_add_rule(repo.raw(), text.as_ptr()) };
    if rc < 0 {
        return Err(git2::Error::last_error(rc));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rooted(dir: &str, text: &str) -> String {
        String::from_utf8(rooted_rules(dir.as_bytes(), text.as_bytes())).unwrap()
    }

    #[test]
    fn a_nested_file_is_anchored_to_its_directory() {
        assert_eq!(rooted("", "*.o\n/x\n"), "*.o\n/x\n");
        assert_eq!(rooted("a/b", "*.o\n"), "a/b/**/*.o\n");
        assert_eq!(
            rooted("a", "/top\nsub/x\nbuild/\n"),
            "a/top\na/sub/x\na/**/build/\n"
        );
        assert_eq!(
            rooted("a", "!keep.o\n# c\n\n\\#lit\n"),
            "!a/**/keep.o\na/**/\\#lit\n"
        );
        assert_eq!(rooted("a", "x/\r\n/\n!\n"), "a/**/x/\n");
    }

    #[test]
    fn a_directory_name_is_literal_text() {
        assert_eq!(rooted("we*ird[1]", "f\n"), "we\\*ird\\[1\\]/**/f\n");
        assert_eq!(rooted("!bang/#hash", "f\n"), "\\!bang/#hash/**/f\n");
        assert_eq!(rooted("new\nline", "f\n"), "new?line/**/f\n");
    }
}

#[cfg(test)]
#[path = "ignore_rules_props.rs"]
mod props;
