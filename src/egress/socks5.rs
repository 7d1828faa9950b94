//! The SOCKS5 side of a client in the container (RFC 1928, no authentication, `CONNECT`
//! only): the greeting answered, the request read; the reply is the caller's, once the
//! destination is decided.

use std::net::{Ipv4Addr, Ipv6Addr};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::http_head::host_name;

pub const SUCCEEDED: u8 = 0x00;
pub const GENERAL_FAILURE: u8 = 0x01;
/// "connection not allowed by ruleset".
pub const NOT_ALLOWED: u8 = 0x02;
pub const HOST_UNREACHABLE: u8 = 0x04;
const COMMAND_NOT_SUPPORTED: u8 = 0x07;
const ADDRESS_NOT_SUPPORTED: u8 = 0x08;

#[derive(Debug, PartialEq, Eq)]
pub struct SocksRequest {
    pub host: String,
    pub port: u16,
}

#[derive(Debug)]
pub enum SocksError {
    Protocol(String),
    Io,
    Closed,
}

impl From<std::io::Error> for SocksError {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::UnexpectedEof => SocksError::Closed,
            _ => SocksError::Io,
        }
    }
}

fn protocol(why: impl Into<String>) -> SocksError {
    SocksError::Protocol(why.into())
}

/// A reply: version 5, `code`, and an unspecified bound address.
pub fn reply(code: u8) -> [u8; 10] {
    [5, code, 0, 1, 0, 0, 0, 0, 0, 0]
}

pub async fn handshake<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
) -> Result<SocksRequest, SocksError> {
    let [version, count] = read_array::<2, _>(stream).await?;
    if version != 5 {
        return Err(protocol(format!("version {version}, not SOCKS5")));
    }
    let mut methods = vec![0u8; usize::from(count)];
    stream.read_exact(&mut methods).await?;
    if !methods.contains(&0) {
        stream.write_all(&[5, 0xff]).await?;
        return Err(protocol(
            "the client offers no method without authentication",
        ));
    }
    stream.write_all(&[5, 0]).await?;
    let [version, command, _, kind] = read_array::<4, _>(stream).await?;
    if version != 5 {
        return Err(protocol(format!("request version {version}")));
    }
    let host = match kind {
        1 => Ipv4Addr::from(read_array::<4, _>(stream).await?).to_string(),
        4 => Ipv6Addr::from(read_array::<16, _>(stream).await?).to_string(),
        3 => {
            let [len] = read_array::<1, _>(stream).await?;
            let mut name = vec![0u8; usize::from(len)];
            stream.read_exact(&mut name).await?;
            domain_name(&name).map_err(protocol)?
        }
        other => {
            stream.write_all(&reply(ADDRESS_NOT_SUPPORTED)).await?;
            return Err(protocol(format!("address type {other}")));
        }
    };
    let port = u16::from_be_bytes(read_array::<2, _>(stream).await?);
    if command != 1 {
        stream.write_all(&reply(COMMAND_NOT_SUPPORTED)).await?;
        return Err(protocol(format!(
            "command {command} (only CONNECT is relayed)"
        )));
    }
    if port == 0 {
        stream.write_all(&reply(GENERAL_FAILURE)).await?;
        return Err(protocol("port 0"));
    }
    Ok(SocksRequest { host, port })
}

/// The host a request's domain name (address type 3) asks for, held to the rules of an
/// HTTP request's host (`host_name`).
pub fn domain_name(name: &[u8]) -> Result<String, String> {
    if name.is_empty() || !name.iter().all(|b| b.is_ascii_graphic()) {
        return Err("a domain name that is not printable ASCII".into());
    }
    host_name(&String::from_utf8_lossy(name))
}

async fn read_array<const N: usize, S: AsyncRead + Unpin>(
    stream: &mut S,
) -> Result<[u8; N], SocksError> {
    let mut buf = [0u8; N];
    stream.read_exact(&mut buf).await?;
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn exchange(client_says: &[u8]) -> (Result<SocksRequest, SocksError>, Vec<u8>) {
        let (mut ours, mut theirs) = tokio::io::duplex(4096);
        theirs.write_all(client_says).await.unwrap();
        theirs.shutdown().await.unwrap();
        let result = handshake(&mut ours).await;
        drop(ours);
        let mut answered = Vec::new();
        theirs.read_to_end(&mut answered).await.unwrap();
        (result, answered)
    }

    #[tokio::test]
    async fn names_and_addresses_are_read() {
        let (r, answered) =
            exchange(b"\x05\x01\x00\x05\x01\x00\x03\x0dInternet.Test\x00\x50").await;
        assert_eq!(
            r.unwrap(),
            SocksRequest {
                host: "internet.test".into(),
                port: 80
            }
        );
        assert_eq!(answered, [5, 0]);
        let (r, _) = exchange(b"\x05\x02\x02\x00\x05\x01\x00\x01\xcb\x00\x71\x02\x01\xbb").await;
        assert_eq!(
            r.unwrap(),
            SocksRequest {
                host: "203.0.113.2".into(),
                port: 443
            }
        );
        let mut v6 = b"\x05\x01\x00\x05\x01\x00\x04".to_vec();
        v6.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        v6.extend_from_slice(&[0, 22]);
        assert_eq!(exchange(&v6).await.0.unwrap().host, "::1");
    }

    #[test]
    fn a_domain_is_read_as_an_http_host_is() {
        assert_eq!(domain_name(b"Internet.Test."), Ok("internet.test".into()));
        // A resolver reads `\101` as `e` and `\i` as `i`: both spell evil.test, which a
        // deny entry must see.
        for escaped in [&b"\\101vil.test"[..], b"ev\\il.test", b"evil.test\\."] {
            assert!(domain_name(escaped).is_err(), "{}", escaped.escape_ascii());
        }
    }

    #[tokio::test]
    async fn what_is_not_relayed_is_answered_and_refused() {
        let (r, answered) = exchange(b"\x05\x01\x02").await;
        assert!(matches!(r, Err(SocksError::Protocol(_))));
        assert_eq!(answered, [5, 0xff]);
        let (r, answered) = exchange(b"\x05\x01\x00\x05\x02\x00\x01\x01\x02\x03\x04\x00\x50").await;
        assert!(matches!(r, Err(SocksError::Protocol(_))));
        assert_eq!(answered[2..], reply(COMMAND_NOT_SUPPORTED));
        assert!(matches!(
            exchange(b"\x05\x01\x00\x05\x01").await.0,
            Err(SocksError::Closed)
        ));
        assert!(matches!(
            exchange(b"\x04\x01").await.0,
            Err(SocksError::Protocol(_))
        ));
        assert_eq!(reply(NOT_ALLOWED), [5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
    }
}
