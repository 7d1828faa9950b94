//! One request head a client in the container sent the HTTP proxy, checked strictly before
//! any HTTP implementation reads it: lines end in CRLF only, no control character anywhere
//! (a tab only inside a header value), `CONNECT host:port` or an absolute `http://` URI
//! whose `Host` agrees, and a body framing nobody can read two ways.

/// A request head, at most.
pub const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 100;

#[derive(Debug, PartialEq, Eq)]
pub enum BodyLength {
    Empty,
    Length(u64),
    Chunked,
}

#[derive(Debug, PartialEq, Eq)]
pub struct RequestHead {
    /// `CONNECT`: what follows the head is the tunnel's.
    pub connect: bool,
    /// An HTTP/1.1 request with an `Upgrade` header, as hyper reads one: what follows it is
    /// the new protocol's once the proxy answered `101`.
    pub upgrade: bool,
    pub host: String,
    pub port: u16,
    pub body: BodyLength,
}

/// Where the head that starts `bytes` ends (just past its blank line), `None` while it is
/// incomplete. `checked` is how far earlier calls got, so that a head arriving a byte at a
/// time is read once; it starts at 0 for each head.
pub fn head_end(bytes: &[u8], checked: &mut usize) -> Result<Option<usize>, String> {
    let mut at = *checked;
    while at < bytes.len() {
        if at >= MAX_HEAD {
            return Err(format!("the request head is over {} KiB", MAX_HEAD / 1024));
        }
        match bytes[at] {
            b'\r' => match bytes.get(at + 1) {
                None => break,
                Some(b'\n') => {
                    if at >= 2 && bytes[at - 2..at] == *b"\r\n" {
                        *checked = at + 2;
                        return Ok(Some(at + 2));
                    }
                    at += 2;
                    continue;
                }
                Some(_) => return Err("a bare CR in the request head".into()),
            },
            b'\n' => return Err("a bare LF in the request head".into()),
            b'\t' => {}
            b if b < 0x20 || b == 0x7f => {
                return Err(format!(
                    "a control character (0x{b:02x}) in the request head"
                ))
            }
            _ => {}
        }
        at += 1;
    }
    *checked = at;
    Ok(None)
}

/// Parses a whole head as `head_end` found it (its blank line included).
pub fn parse_head(bytes: &[u8]) -> Result<RequestHead, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "the request head is not UTF-8")?;
    let text = text
        .strip_suffix("\r\n\r\n")
        .ok_or("the request head does not end in a blank line")?;
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (method, target, version) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v), None) => (m, t, v),
        _ => return Err(format!("'{}' is not a request line", printable(line))),
    };
    if !is_token(method) {
        return Err("a request method is not a token".into());
    }
    if target.is_empty() || !target.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("the request target holds a byte that is not printable ASCII".into());
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(format!(
            "'{}' is not HTTP/1.0 or HTTP/1.1",
            printable(version)
        ));
    }
    let headers = headers(lines)?;
    let body = body_length(&headers, version == "HTTP/1.1")?;
    // Methods are case-sensitive: `connect` is no tunnel, to hyper or here.
    if method == "CONNECT" {
        if body != BodyLength::Empty {
            return Err("a CONNECT request with a body".into());
        }
        let (host, port) = host_port(target, None)?;
        return Ok(RequestHead {
            connect: true,
            upgrade: false,
            host,
            port,
            body,
        });
    }
    let authority = absolute_authority(target)?;
    let (host, port) = host_port(authority, Some(80))?;
    let hosts: Vec<&str> = named(&headers, "host").collect();
    if hosts.len() > 1 {
        return Err("more than one Host header".into());
    }
    if let Some(value) = hosts.first() {
        if host_port(value, Some(80)).ok() != Some((host.clone(), port)) {
            return Err(format!(
                "the Host header '{}' is not the request's host {host}:{port}",
                printable(value)
            ));
        }
    }
    Ok(RequestHead {
        connect: false,
        upgrade: version == "HTTP/1.1" && named(&headers, "upgrade").next().is_some(),
        host,
        port,
        body,
    })
}

fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&b))
}

/// The header lines, each `name: value` (a trailer section has the same form).
pub fn headers<'a>(
    lines: impl Iterator<Item = &'a str>,
) -> Result<Vec<(&'a str, &'a str)>, String> {
    let mut found = Vec::new();
    for line in lines {
        if found.len() >= MAX_HEADERS {
            return Err(format!("more than {MAX_HEADERS} header lines"));
        }
        found.push(header_line(line)?);
    }
    Ok(found)
}

pub fn header_line(line: &str) -> Result<(&str, &str), String> {
    if line.starts_with([' ', '\t']) {
        return Err("a folded header line".into());
    }
    let (name, value) = line.split_once(':').ok_or("a header line without ':'")?;
    if !is_token(name) {
        return Err("a header name is not a token".into());
    }
    let value = value.trim_matches([' ', '\t']);
    if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(format!("header '{name}' holds a control character"));
    }
    Ok((name, value))
}

fn named<'a>(
    headers: &'a [(&'a str, &'a str)],
    name: &'static str,
) -> impl Iterator<Item = &'a str> + 'a {
    headers
        .iter()
        .filter(move |(h, _)| h.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
}

/// The body's framing, refusing what request smuggling is made of: both lengths, two
/// different lengths, a transfer coding other than `chunked` alone, or one in HTTP/1.0.
fn body_length(headers: &[(&str, &str)], http11: bool) -> Result<BodyLength, String> {
    let lengths: Vec<&str> = named(headers, "content-length").collect();
    let codings: Vec<&str> = named(headers, "transfer-encoding").collect();
    if !codings.is_empty() && !lengths.is_empty() {
        return Err("both Transfer-Encoding and Content-Length".into());
    }
    if !codings.is_empty() {
        if !http11 {
            return Err("Transfer-Encoding in an HTTP/1.0 request".into());
        }
        if codings.len() > 1 || !codings[0].eq_ignore_ascii_case("chunked") {
            return Err("a Transfer-Encoding other than 'chunked' alone".into());
        }
        return Ok(BodyLength::Chunked);
    }
    if lengths.windows(2).any(|w| w[0] != w[1]) {
        return Err("two different Content-Length headers".into());
    }
    match lengths.first() {
        None => Ok(BodyLength::Empty),
        Some(text) => {
            let digits =
                !text.is_empty() && text.len() <= 18 && text.bytes().all(|b| b.is_ascii_digit());
            match text.parse::<u64>() {
                Ok(0) if digits => Ok(BodyLength::Empty),
                Ok(n) if digits => Ok(BodyLength::Length(n)),
                _ => Err("a Content-Length that is not a number".into()),
            }
        }
    }
}

/// The authority of an absolute `http://authority/path` target.
fn absolute_authority(target: &str) -> Result<&str, String> {
    let scheme_end = target.find("://").ok_or(
        "a plain request through the proxy needs an absolute http:// URI (HTTPS goes through CONNECT: set HTTPS_PROXY)",
    )?;
    if !target[..scheme_end].eq_ignore_ascii_case("http") {
        return Err(format!(
            "scheme '{}' is not proxied as a plain request: use CONNECT (HTTPS_PROXY) for https",
            printable(&target[..scheme_end])
        ));
    }
    let after = &target[scheme_end + 3..];
    let cut = after.find(['/', '?', '#']).unwrap_or(after.len());
    let authority = &after[..cut];
    if authority.contains('@') {
        return Err("credentials in the URI are not passed on".into());
    }
    Ok(authority)
}

/// `host:port` (`[v6]:port`), the port required unless `default` gives one; the host
/// lower-cased, without a trailing dot.
pub fn host_port(text: &str, default: Option<u16>) -> Result<(String, u16), String> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("an unclosed '['")?;
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(format!("'{}' is not host:port", printable(text))),
            },
        }
    } else {
        match text.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let port = match (port, default) {
        (Some(p), _) => p
            .parse::<u16>()
            .ok()
            .filter(|n| *n > 0 && p.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| format!("'{}' is not a port", printable(p)))?,
        (None, Some(d)) => d,
        (None, None) => return Err("CONNECT needs host:port".into()),
    };
    Ok((host_name(host)?, port))
}

/// A host as the policy and the resolver get it: lower-cased, one trailing dot dropped, of
/// letters, digits, `-`, `.`, `_` and `:` alone (no `\`: a resolver reads `\DDD` and `\X`
/// as escapes, which would spell a name no rule sees), at most 253 bytes.
pub fn host_name(host: &str) -> Result<String, String> {
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    let valid = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b));
    if !valid {
        return Err(format!("'{}' is not a host", printable(&host)));
    }
    Ok(host)
}

/// `text` with control characters as spaces, at most 200 characters: fit for a message.
pub fn printable(text: &str) -> String {
    text.chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
#[path = "http_head_tests.rs"]
mod tests;
