//! Whether an entry name is, on some file system, one of the dot names git guards (`.git`,
//! `.gitmodules`, `.gitattributes`): compared as HFS+ compares names (case folded, its
//! ignorable code points skipped) and as NTFS does (trailing dots and spaces, alternate
//! data streams, 8.3 short names). Ported from git's `is_hfs_dot_generic` and
//! `is_ntfs_dot_generic` (utf8.c, path.c). The HFS+ one reads UTF-8 as git does: where the
//! bytes after the dot name are not UTF-8 (by git's reading, which also refuses U+FFFE and
//! U+FFFF), git cannot tell what HFS+ would make of them and takes the name for the dot name
//! (gix-validate reads them as U+FFFD instead, and its copies are private).

/// Code points HFS+ ignores when it compares names.
fn hfs_ignorable(c: u32) -> bool {
    matches!(
        c,
        0x200c..=0x200f | 0x202a..=0x202e | 0x206a..=0x206f | 0xfeff
    )
}

/// One code point at the start of `s` and its length in bytes, as git's
/// `pick_one_utf8_char` reads it; `None` where git finds the UTF-8 malformed.
fn utf8_char(s: &[u8]) -> Option<(u32, usize)> {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let follows = |i: usize| at(i) & 0xc0 == 0x80;
    let low = |i: usize, bits: u32| u32::from(at(i)) & ((1 << bits) - 1);
    let (s0, s1, s2) = (at(0), at(1), at(2));
    if s0 < 0x80 {
        Some((u32::from(s0), 1))
    } else if s0 & 0xe0 == 0xc0 {
        let overlong = s0 & 0xfe == 0xc0;
        (follows(1) && !overlong).then(|| (low(0, 5) << 6 | low(1, 6), 2))
    } else if s0 & 0xf0 == 0xe0 {
        let bad = (s0 == 0xe0 && s1 & 0xe0 == 0x80)
            || (s0 == 0xed && s1 & 0xe0 == 0xa0)
            || (s0 == 0xef && s1 == 0xbf && s2 & 0xfe == 0xbe);
        (follows(1) && follows(2) && !bad)
            .then(|| (low(0, 4) << 12 | low(1, 6) << 6 | low(2, 6), 3))
    } else if s0 & 0xf8 == 0xf0 {
        let bad = (s0 == 0xf0 && s1 & 0xf0 == 0x80) || (s0 == 0xf4 && s1 > 0x8f) || s0 > 0xf4;
        (follows(1) && follows(2) && follows(3) && !bad).then(|| {
            let c = low(0, 3) << 18 | low(1, 6) << 12 | low(2, 6) << 6 | low(3, 6);
            (c, 4)
        })
    } else {
        None
    }
}

/// git's `next_hfs_char`: the next code point HFS+ does not ignore, `0` at the end and
/// where the UTF-8 is malformed (nothing is read after that).
fn next_hfs_char(rest: &mut &[u8]) -> u32 {
    while !rest.is_empty() {
        let Some((c, len)) = utf8_char(rest) else {
            *rest = &[];
            return 0;
        };
        *rest = &rest[len..];
        if !hfs_ignorable(c) {
            return c;
        }
    }
    0
}

/// `.{needle}` (lower-case ASCII) as HFS+ would find it.
pub fn is_hfs_dot(name: &[u8], needle: &str) -> bool {
    let mut rest = name;
    if next_hfs_char(&mut rest) != u32::from(b'.') {
        return false;
    }
    for wanted in needle.bytes() {
        let c = next_hfs_char(&mut rest);
        if c > 0x7f || (c as u8).to_ascii_lowercase() != wanted {
            return false;
        }
    }
    matches!(next_hfs_char(&mut rest), 0 | 0x2f)
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
    fn hfs_gives_up_on_bytes_that_are_not_utf8_after_the_needle_as_git_does() {
        for name in [
            &b".gitmodules\xff"[..],
            b".GITMODULES\xff\xff",
            b".gitmodules\xe2\x80",
            b".gitmodules\xef\xbf\xbe",
            b".gitmodules\xef\xbf\xbf",
            b".gitmodules\xc0\x80",
            b".gitmodules\xed\xa0\x80",
            b".gitmodules\xf4\x90\x80\x80",
            b"\xe2\x80\x8c.gitmodules\xe2\x80\x8d\xff",
            b".gitmodules/",
        ] {
            assert!(is_hfs_dot(name, "gitmodules"), "{name:?}");
        }
        for name in [
            &b"\xff.gitmodules"[..],
            b".\xffgitmodules",
            b".gitmod\xffules",
            b".gitmodules\xef\xbf\xbd",
            b".gitmodules\xe2\x80\x8cx",
            b"x\xff",
            b"\xff",
        ] {
            assert!(!is_hfs_dot(name, "gitmodules"), "{name:?}");
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
