//! A submodule URL from a `.gitmodules` as git's `check_submodule_url` checks it: nothing
//! that looks like a command-line option, no newline once URL-decoded (it would reach the
//! credential protocol), no relative URL that climbs out of its root into the host part
//! (CVE-2020-11008), and an `http(s)`/`ftp(s)` URL that parses.

fn is_sep(b: u8) -> bool {
    b == b'/' || b == b'\\'
}

/// `./` or `../` (either separator) at the start.
fn dot_slash_len(url: &[u8]) -> Option<usize> {
    match url {
        [b'.', s, ..] if is_sep(*s) => Some(2),
        [b'.', b'.', s, ..] if is_sep(*s) => Some(3),
        _ => None,
    }
}

/// `%XX` sequences decoded, as git's `url_decode` (others kept as they are).
fn url_decode(url: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(url.len());
    let mut i = 0;
    while i < url.len() {
        let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
        if url[i] == b'%' {
            if let (Some(hi), Some(lo)) = (hex(url.get(i + 1)), hex(url.get(i + 2))) {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(url[i]);
        i += 1;
    }
    out
}

/// The URL curl would be given, for the schemes git hands to curl.
fn curl_url(url: &[u8]) -> Option<&[u8]> {
    for helper in [&b"http::"[..], b"https::", b"ftp::", b"ftps::"] {
        if let Some(rest) = url.strip_prefix(helper) {
            return Some(rest);
        }
    }
    [&b"http://"[..], b"https://", b"ftp://", b"ftps://"]
        .iter()
        .any(|scheme| url.starts_with(scheme))
        .then_some(url)
}

/// Why git would refuse `url` as a submodule's URL.
pub fn refusal(url: &[u8]) -> Option<&'static str> {
    if url.first() == Some(&b'-') {
        return Some("it looks like a command-line option");
    }
    if dot_slash_len(url).is_some() || url.starts_with(b"git://") {
        if url_decode(url).contains(&b'\n') {
            return Some("it holds a newline once decoded");
        }
        let (mut rest, mut climbs) = (url, 0);
        while let Some(len) = dot_slash_len(rest) {
            climbs += usize::from(len == 3);
            rest = &rest[len..];
        }
        if climbs > 0 && matches!(rest.first(), Some(b':' | b'/')) {
            return Some("it climbs out of its root into the host part");
        }
        return None;
    }
    let curl = curl_url(url)?;
    if curl.contains(&b'\n') || url_decode(curl).contains(&b'\n') {
        return Some("it holds a newline once decoded");
    }
    let parses = std::str::from_utf8(curl)
        .ok()
        .is_some_and(|text| url::Url::parse(text).is_ok());
    (!parses).then_some("it is not a URL git can normalise")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submodule_urls_are_checked_as_git_checks_them() {
        for ok in [
            "https://example.com/a.git",
            "../sibling.git",
            "./child",
            "git@example.com:a/b.git",
            "git://example.com/x",
            "/srv/repo",
        ] {
            assert_eq!(refusal(ok.as_bytes()), None, "{ok}");
        }
        for bad in [
            "-oProxyCommand=x",
            "../../../:host/x",
            ".././/example.com/x",
            "./%0ahost=evil",
            "git://h/x%0a",
            "https://example.com/%0a",
            "http::https://exa mple.com\n/",
            "https://[::1/x",
        ] {
            assert!(refusal(bad.as_bytes()).is_some(), "{bad}");
        }
    }
}
