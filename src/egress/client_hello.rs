//! The server name a TLS ClientHello asks for, read from the first bytes of a tunnel (over
//! as many TLS records as it spans, at most 16 KiB), so that a tunnel opened for one host
//! cannot carry a handshake for another (domain fronting).

const MAX_HELLO: usize = 16 * 1024;
const HANDSHAKE: u8 = 22;
const CLIENT_HELLO: u8 = 1;

#[derive(Debug, PartialEq, Eq)]
pub enum Hello {
    NotTls,
    Incomplete,
    ServerName(Option<String>),
    Malformed,
}

/// What the first bytes of a tunnel are.
pub fn server_name(bytes: &[u8]) -> Hello {
    match bytes.first() {
        None => return Hello::Incomplete,
        Some(&HANDSHAKE) => {}
        Some(_) => return Hello::NotTls,
    }
    if bytes.len() >= 2 && bytes[1] != 3 {
        return Hello::NotTls;
    }
    let message = match reassemble(bytes) {
        Ok(Some(message)) => message,
        Ok(None) => return Hello::Incomplete,
        Err(()) => return Hello::Malformed,
    };
    match parse_hello(&message) {
        Some(name) => Hello::ServerName(name),
        None => Hello::Malformed,
    }
}

/// The handshake message from the records at the start of `bytes`, once all of it is there.
fn reassemble(bytes: &[u8]) -> Result<Option<Vec<u8>>, ()> {
    let mut message = Vec::new();
    let mut at = 0;
    loop {
        let Some(header) = bytes.get(at..at + 5) else {
            return Ok(None);
        };
        if header[0] != HANDSHAKE || header[1] != 3 {
            return Err(());
        }
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        if len == 0 || len > 16384 + 2048 {
            return Err(());
        }
        let Some(body) = bytes.get(at + 5..at + 5 + len) else {
            return Ok(None);
        };
        message.extend_from_slice(body);
        at += 5 + len;
        if message.len() >= 4 {
            if message[0] != CLIENT_HELLO {
                return Err(());
            }
            let want = 4
                + (usize::from(message[1]) << 16
                    | usize::from(message[2]) << 8
                    | usize::from(message[3]));
            if want > MAX_HELLO {
                return Err(());
            }
            if message.len() >= want {
                message.truncate(want);
                return Ok(Some(message));
            }
        }
    }
}

struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<usize> {
        self.take(1).map(|b| usize::from(b[0]))
    }
    fn u16(&mut self) -> Option<usize> {
        self.take(2)
            .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
    }
}

/// `Some(sni)` for a ClientHello that parses, its host name if it has one.
fn parse_hello(message: &[u8]) -> Option<Option<String>> {
    let mut c = Cursor(message.get(4..)?);
    c.take(2 + 32)?;
    let session = c.u8()?;
    if session > 32 {
        return None;
    }
    c.take(session)?;
    let suites = c.u16()?;
    if suites % 2 != 0 {
        return None;
    }
    c.take(suites)?;
    let compression = c.u8()?;
    c.take(compression)?;
    if c.0.is_empty() {
        return Some(None);
    }
    let len = c.u16()?;
    let mut extensions = Cursor(c.take(len)?);
    while !extensions.0.is_empty() {
        let kind = extensions.u16()?;
        let len = extensions.u16()?;
        let body = extensions.take(len)?;
        if kind == 0 {
            return host_name(body).map(Some);
        }
    }
    Some(None)
}

fn host_name(body: &[u8]) -> Option<String> {
    let mut c = Cursor(body);
    let len = c.u16()?;
    let mut list = Cursor(c.take(len)?);
    while !list.0.is_empty() {
        let kind = list.u8()?;
        let len = list.u16()?;
        let name = list.take(len)?;
        if kind == 0 {
            let name = std::str::from_utf8(name).ok()?;
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic()) {
                return None;
            }
            return Some(name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase());
        }
    }
    None
}

/// Whether a ClientHello naming `sni` may go through a tunnel opened for `connect_host`:
/// the same name, or no name at all; none but no name when the tunnel was opened for an
/// address.
pub fn sni_matches(connect_host: &str, sni: Option<&str>) -> bool {
    let Some(sni) = sni else { return true };
    let host = connect_host.trim_start_matches('[').trim_end_matches(']');
    if host.parse::<std::net::IpAddr>().is_ok() {
        return false;
    }
    let normal = |s: &str| s.strip_suffix('.').unwrap_or(s).to_ascii_lowercase();
    normal(host) == normal(sni)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(sni: Option<&str>) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend([7u8; 32]);
        body.push(0);
        body.extend([0, 2, 0x13, 0x01]);
        body.extend([1, 0]);
        let mut extensions = vec![0x00, 0x2b, 0, 3, 2, 3, 4];
        if let Some(name) = sni {
            let n = name.len() as u16;
            extensions.extend([0, 0]);
            extensions.extend((n + 5).to_be_bytes());
            extensions.extend((n + 3).to_be_bytes());
            extensions.push(0);
            extensions.extend(n.to_be_bytes());
            extensions.extend(name.as_bytes());
        }
        body.extend((extensions.len() as u16).to_be_bytes());
        body.extend(extensions);
        let mut message = vec![CLIENT_HELLO, 0];
        message.extend((body.len() as u16).to_be_bytes());
        message.extend(body);
        message
    }

    fn records(message: &[u8], pieces: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for chunk in message.chunks(message.len().div_ceil(pieces)) {
            out.extend([HANDSHAKE, 3, 1]);
            out.extend((chunk.len() as u16).to_be_bytes());
            out.extend(chunk);
        }
        out
    }

    #[test]
    fn the_server_name_is_read_whole_or_in_pieces() {
        let one = records(&hello(Some("Internet.Test")), 1);
        assert_eq!(
            server_name(&one),
            Hello::ServerName(Some("internet.test".into()))
        );
        let two = records(&hello(Some("a.test")), 2);
        assert_eq!(server_name(&two), Hello::ServerName(Some("a.test".into())));
        assert_eq!(
            server_name(&records(&hello(None), 1)),
            Hello::ServerName(None)
        );
        for cut in 0..one.len() {
            assert_eq!(server_name(&one[..cut]), Hello::Incomplete, "cut at {cut}");
        }
    }

    #[test]
    fn other_bytes_are_not_tls_or_malformed() {
        assert_eq!(server_name(b"GET / HTTP/1.1\r\n"), Hello::NotTls);
        assert_eq!(server_name(b"SSH-2.0-x"), Hello::NotTls);
        assert_eq!(
            server_name(&[HANDSHAKE, 3, 1, 0xff, 0xff]),
            Hello::Malformed
        );
        let mut not_hello = records(&hello(Some("a.test")), 1);
        not_hello[5] = 2;
        assert_eq!(server_name(&not_hello), Hello::Malformed);
        let mut lying = hello(Some("a.test"));
        let at = lying.len() - 8;
        lying[at] = 0xff;
        assert_eq!(server_name(&records(&lying, 1)), Hello::Malformed);
    }

    #[test]
    fn the_name_must_be_the_tunnels() {
        assert!(sni_matches("internet.test", Some("INTERNET.test.")));
        assert!(sni_matches("internet.test", None));
        assert!(!sni_matches("internet.test", Some("evil.test")));
        assert!(sni_matches("203.0.113.2", None));
        assert!(!sni_matches("203.0.113.2", Some("internet.test")));
    }
}
