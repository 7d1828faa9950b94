//! The HTTP proxy's side of a client in the container: one request head read (bounded),
//! `CONNECT host:port` or a plain request with an absolute `http://` URI, the latter
//! re-written for the origin server; and the answers the proxy gives (established, refused).

use tokio::io::{AsyncRead, AsyncReadExt};

const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 100;

#[derive(Debug, PartialEq, Eq)]
pub enum ProxyRequest {
    Connect {
        host: String,
        port: u16,
        rest: Vec<u8>,
    },
    Forward {
        host: String,
        port: u16,
        head: Vec<u8>,
        rest: Vec<u8>,
    },
}

#[derive(Debug)]
pub enum ProxyError {
    BadRequest(String),
    TooLarge,
    Io,
    Closed,
}

fn bad(why: impl Into<String>) -> ProxyError {
    ProxyError::BadRequest(why.into())
}

/// Reads one request head (up to the blank line, at most 64 KiB) and parses it.
pub async fn read_request<R: AsyncRead + Unpin>(
    stream: &mut R,
) -> Result<ProxyRequest, ProxyError> {
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(at) = find(&buf, b"\r\n\r\n") {
            break at;
        }
        if buf.len() > MAX_HEAD {
            return Err(ProxyError::TooLarge);
        }
        let n = stream.read(&mut chunk).await.map_err(|_| ProxyError::Io)?;
        if n == 0 {
            return Err(ProxyError::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    if end > MAX_HEAD {
        return Err(ProxyError::TooLarge);
    }
    let rest = buf[end + 4..].to_vec();
    let head =
        std::str::from_utf8(&buf[..end]).map_err(|_| bad("the request head is not UTF-8"))?;
    parse(head, rest)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn parse(head: &str, rest: Vec<u8>) -> Result<ProxyRequest, ProxyError> {
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (method, target, version) = match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(m), Some(t), Some(v), None) => (m, t, v),
        _ => return Err(bad(format!("'{}' is not a request line", printable(line)))),
    };
    if method.is_empty()
        || !method
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&b))
    {
        return Err(bad("a request method is not a token"));
    }
    if version != "HTTP/1.1" && version != "HTTP/1.0" {
        return Err(bad(format!(
            "'{}' is not HTTP/1.0 or HTTP/1.1",
            printable(version)
        )));
    }
    let headers = headers(lines)?;
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = host_port(target, None)?;
        return Ok(ProxyRequest::Connect { host, port, rest });
    }
    let (authority, path) = absolute_uri(target)?;
    let (host, port) = host_port(authority, Some(80))?;
    check_framing(&headers)?;
    let mut out = format!("{method} {path} {version}\r\n");
    let mut has_host = false;
    let dropped = connection_named(&headers);
    for (name, value) in &headers {
        let lower = name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&lower.as_str()) || dropped.contains(&lower) {
            continue;
        }
        if lower == "host" {
            if host_port(value, Some(80)).ok() != Some((host.clone(), port)) {
                return Err(bad(format!(
                    "the Host header '{}' is not the request's host {host}:{port}",
                    printable(value)
                )));
            }
            has_host = true;
        }
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    if !has_host {
        let shown = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        match port {
            80 => out.push_str(&format!("Host: {shown}\r\n")),
            _ => out.push_str(&format!("Host: {shown}:{port}\r\n")),
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    Ok(ProxyRequest::Forward {
        host,
        port,
        head: out.into_bytes(),
        rest,
    })
}

const HOP_BY_HOP: &[&str] = &[
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
];

fn headers<'a>(
    lines: impl Iterator<Item = &'a str>,
) -> Result<Vec<(&'a str, &'a str)>, ProxyError> {
    let mut found = Vec::new();
    for line in lines {
        if found.len() >= MAX_HEADERS {
            return Err(ProxyError::TooLarge);
        }
        if line.starts_with([' ', '\t']) {
            return Err(bad("a folded header line"));
        }
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| bad("a header line without ':'"))?;
        let token = |b: u8| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(&b);
        if name.is_empty() || !name.bytes().all(token) {
            return Err(bad("a header name is not a token"));
        }
        let value = value.trim_matches([' ', '\t']);
        if value.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
            return Err(bad(format!("header '{name}' holds a control character")));
        }
        found.push((name, value));
    }
    Ok(found)
}

/// Header names the `Connection` header lists (hop-by-hop for this request).
fn connection_named(headers: &[(&str, &str)]) -> Vec<String> {
    headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("connection"))
        .flat_map(|(_, v)| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .collect()
}

/// Refuses what request smuggling is made of.
fn check_framing(headers: &[(&str, &str)]) -> Result<(), ProxyError> {
    let named = |n: &'static str| {
        headers
            .iter()
            .filter(move |(h, _)| h.eq_ignore_ascii_case(n))
            .map(|(_, v)| *v)
            .collect::<Vec<&str>>()
    };
    let lengths = named("content-length");
    if !named("transfer-encoding").is_empty() && !lengths.is_empty() {
        return Err(bad("both Transfer-Encoding and Content-Length"));
    }
    if lengths.windows(2).any(|w| w[0] != w[1]) {
        return Err(bad("two different Content-Length headers"));
    }
    if lengths
        .iter()
        .any(|l| l.is_empty() || !l.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(bad("a Content-Length that is not a number"));
    }
    Ok(())
}

/// `http://authority/path` as (authority, path).
fn absolute_uri(target: &str) -> Result<(&str, String), ProxyError> {
    let scheme_end = target.find("://").ok_or_else(|| {
        bad("a plain request through the proxy needs an absolute http:// URI (HTTPS goes through CONNECT: set HTTPS_PROXY)")
    })?;
    if !target[..scheme_end].eq_ignore_ascii_case("http") {
        return Err(bad(format!(
            "scheme '{}' is not proxied as a plain request: use CONNECT (HTTPS_PROXY) for https",
            printable(&target[..scheme_end])
        )));
    }
    let after = &target[scheme_end + 3..];
    let cut = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, path) = after.split_at(cut);
    if authority.contains('@') {
        return Err(bad("credentials in the URI are not passed on"));
    }
    let path = path.split('#').next().unwrap_or_default();
    let path = match path {
        "" => "/".to_string(),
        p if p.starts_with('?') => format!("/{p}"),
        p => p.to_string(),
    };
    Ok((authority, path))
}

/// `host:port` (`[v6]:port`), the port required unless `default` gives one.
fn host_port(text: &str, default: Option<u16>) -> Result<(String, u16), ProxyError> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(|| bad("an unclosed '['"))?;
        (host, after.strip_prefix(':'))
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
            .filter(|p| *p > 0)
            .ok_or_else(|| bad(format!("'{}' is not a port", printable(p))))?,
        (None, Some(d)) => d,
        (None, None) => return Err(bad("CONNECT needs host:port")),
    };
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    let valid = !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:".contains(&b));
    if !valid {
        return Err(bad(format!("'{}' is not a host", printable(&host))));
    }
    Ok((host, port))
}

fn printable(text: &str) -> String {
    text.chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

pub fn connect_established() -> &'static [u8] {
    b"HTTP/1.1 200 Connection established\r\n\r\n"
}

/// A whole response refusing the request, `body` as its one line.
pub fn refusal(status: u16, reason: &str, body: &str) -> Vec<u8> {
    let line: String = body
        .chars()
        .map(|c| {
            if c.is_control() || !c.is_ascii() {
                ' '
            } else {
                c
            }
        })
        .collect();
    let text = format!("{body}\n");
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nX-Container-Isolation-Refusal: {line}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )
    .into_bytes()
}

#[cfg(test)]
#[path = "http_proxy_tests.rs"]
mod tests;
