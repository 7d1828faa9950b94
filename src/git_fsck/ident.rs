//! An `author`, `committer` or `tagger` line's value as git's `fsck_ident` checks it:
//! `Name <email> <seconds> <+hhmm>`, the name and email free of `<`, `>` and newlines, the
//! time a number without zero padding that fits a signed 64-bit value.

use super::finding::Finding;

fn bad(id: &'static str, what: &str) -> Finding {
    Finding::new(id, format!("invalid author/committer line - {what}"))
}

/// Checks one identity line's value (after `author `, up to but without its newline).
pub fn check_ident(line: &[u8]) -> Result<(), Finding> {
    if line.first() == Some(&b'<') {
        return Err(bad("missingNameBeforeEmail", "missing space before email"));
    }
    let open = line.iter().position(|b| matches!(b, b'<' | b'>'));
    let open = match open {
        Some(at) if line[at] == b'<' => at,
        Some(_) => return Err(bad("badName", "bad name")),
        None => return Err(bad("missingEmail", "missing email")),
    };
    if open == 0 || line[open - 1] != b' ' {
        return Err(bad("missingSpaceBeforeEmail", "missing space before email"));
    }
    let after_open = &line[open + 1..];
    let close = match after_open.iter().position(|b| matches!(b, b'<' | b'>')) {
        Some(at) if after_open[at] == b'>' => at,
        _ => return Err(bad("badEmail", "bad email")),
    };
    let rest = &after_open[close + 1..];
    let Some(rest) = rest.strip_prefix(b" ") else {
        return Err(bad("missingSpaceBeforeDate", "missing space before date"));
    };
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if rest.first() == Some(&b'0') && rest.get(1) != Some(&b' ') {
        return Err(bad("zeroPaddedDate", "zero-padded date"));
    }
    let fits = rest[..digits].iter().try_fold(0i64, |n, d| {
        n.checked_mul(10)?.checked_add(i64::from(d - b'0'))
    });
    if fits.is_none() {
        return Err(bad("badDateOverflow", "date causes integer overflow"));
    }
    if digits == 0 || rest.get(digits) != Some(&b' ') {
        return Err(bad("badDate", "bad date"));
    }
    let zone = &rest[digits + 1..];
    let zone_ok = zone.len() == 5
        && matches!(zone[0], b'+' | b'-')
        && zone[1..].iter().all(u8::is_ascii_digit);
    if !zone_ok {
        return Err(bad("badTimezone", "bad time zone"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(line: &str) -> Option<&'static str> {
        check_ident(line.as_bytes()).err().map(|f| f.id)
    }

    #[test]
    fn identities_are_checked_as_fsck_does() {
        assert_eq!(id("A U Thor <a@example.com> 1700000000 +0100"), None);
        assert_eq!(
            id(" <a@b> 0 +0000"),
            None,
            "an empty name after a space is git's own"
        );
        assert_eq!(id("<a@b> 1 +0000"), Some("missingNameBeforeEmail"));
        assert_eq!(id("A > <a@b> 1 +0000"), Some("badName"));
        assert_eq!(id("A a@b 1 +0000"), Some("missingEmail"));
        assert_eq!(id("A<a@b> 1 +0000"), Some("missingSpaceBeforeEmail"));
        assert_eq!(id("A <a<b> 1 +0000"), Some("badEmail"));
        assert_eq!(id("A <a@b>1 +0000"), Some("missingSpaceBeforeDate"));
        assert_eq!(id("A <a@b> 01 +0000"), Some("zeroPaddedDate"));
        assert_eq!(
            id("A <a@b> 99999999999999999999 +0000"),
            Some("badDateOverflow")
        );
        assert_eq!(id("A <a@b> x +0000"), Some("badDate"));
        assert_eq!(id("A <a@b> 1 0000"), Some("badTimezone"));
        assert_eq!(id("A <a@b> 1 +00000"), Some("badTimezone"));
    }
}
