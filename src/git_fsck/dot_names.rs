//! Whether an entry name is, on some file system, one of the dot files git reads from a
//! checkout (`.gitmodules`, `.gitattributes`): compared as HFS+ compares names (case folded,
//! its ignorable code points skipped) and as NTFS does (trailing dots and spaces, alternate
//! data streams, 8.3 short names). Ported from git's `is_hfs_dot_str` and
//! `is_ntfs_dot_generic` (utf8.c, path.c); gix-validate keeps its own copies private.

/// Code points HFS+ ignores when it compares names.
fn hfs_ignorable(c: char) -> bool {
    matches!(
        c as u32,
        0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff
    )
}

/// `.{needle}` as HFS+ would find it.
pub fn is_hfs_dot(name: &[u8], needle: &str) -> bool {
    let Ok(text) = std::str::from_utf8(name) else {
        return false;
    };
    let mut chars = text.chars().filter(|c| !hfs_ignorable(*c));
    if chars.next() != Some('.') {
        return false;
    }
    let mut wanted = needle.chars();
    loop {
        match (wanted.next(), chars.next()) {
            (Some(a), Some(b)) if a.eq_ignore_ascii_case(&b) => {}
            (None, None) => return true,
            _ => return false,
        }
    }
}

/// Only spaces and dots up to the end or a `:` (an alternate data stream).
fn ntfs_done(rest: &[u8]) -> bool {
    for &b in rest {
        if b == b':' {
            return true;
        }
        if b != b' ' && b != b'.' {
            return false;
        }
    }
    true
}

/// `.{needle}` as NTFS would find it, `short_prefix` being the 8.3 name's hashed form
/// (`gi7eba` for `gitmodules`, `gi7d29` for `gitattributes`).
pub fn is_ntfs_dot(name: &[u8], needle: &str, short_prefix: &str) -> bool {
    let needle = needle.as_bytes();
    if name.first() == Some(&b'.')
        && name.len() > needle.len()
        && name[1..=needle.len()].eq_ignore_ascii_case(needle)
    {
        return ntfs_done(&name[needle.len() + 1..]);
    }
    if name.len() >= 8
        && name[..6].eq_ignore_ascii_case(&needle[..6])
        && name[6] == b'~'
        && (b'1'..=b'4').contains(&name[7])
    {
        return ntfs_done(&name[8..]);
    }
    let prefix = short_prefix.as_bytes();
    let mut saw_tilde = false;
    let mut i = 0;
    while i < 8 {
        let Some(&b) = name.get(i) else {
            return false;
        };
        if saw_tilde {
            if !b.is_ascii_digit() {
                return false;
            }
        } else if b == b'~' {
            i += 1;
            if !name.get(i).is_some_and(|d| (b'1'..=b'9').contains(d)) {
                return false;
            }
            saw_tilde = true;
        } else if i >= 6 || b & 0x80 != 0 || b.to_ascii_lowercase() != prefix[i] {
            return false;
        }
        i += 1;
    }
    ntfs_done(&name[8..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hfs_folds_case_and_ignorable_code_points() {
        for name in [
            ".gitmodules",
            ".GitModules",
            ".git\u{200c}modules",
            "\u{feff}.gitmodules\u{200d}",
        ] {
            assert!(is_hfs_dot(name.as_bytes(), "gitmodules"), "{name:?}");
        }
        for name in [
            ".gitmodulesx",
            "gitmodules",
            ".gitmodule",
            ".gitmodul\u{e9}s",
        ] {
            assert!(!is_hfs_dot(name.as_bytes(), "gitmodules"), "{name:?}");
        }
    }

    #[test]
    fn ntfs_finds_streams_trailing_dots_and_short_names() {
        let modules = |n: &str| is_ntfs_dot(n.as_bytes(), "gitmodules", "gi7eba");
        for name in [
            ".gitmodules",
            ".GITMODULES. .",
            ".gitmodules::$DATA",
            "gitmod~1",
            "GITMOD~4",
            "gi7eba~1",
            "gi7eb~12",
        ] {
            assert!(modules(name), "{name:?}");
        }
        for name in [
            ".gitmodulesx",
            "gitmod~5",
            "gitmod~1x",
            "gi7eb~1",
            "gi7eba~12",
            "gi7ebb~1",
            "gitmod",
        ] {
            assert!(!modules(name), "{name:?}");
        }
        assert!(is_ntfs_dot(b"gi7d29~1", "gitattributes", "gi7d29"));
    }
}
