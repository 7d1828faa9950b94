//! The headers meant for one hop only, which the HTTP proxy drops both ways, and the two
//! an upgrade keeps: its `Upgrade` and a `Connection` that names `upgrade` alone.

use hyper::header::{HeaderMap, HeaderValue, CONNECTION, UPGRADE};

const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Removes the headers meant for one hop only, and those the `Connection` header names.
pub fn strip(headers: &mut HeaderMap) {
    let named: Vec<String> = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .filter(|n| !n.is_empty())
        .collect();
    for name in HOP_BY_HOP
        .iter()
        .copied()
        .chain(named.iter().map(String::as_str))
    {
        headers.remove(name);
    }
}

/// As `strip`, but the `Upgrade` values stay, with `Connection: upgrade`.
pub fn strip_but_upgrade(headers: &mut HeaderMap) {
    let upgrade: Vec<HeaderValue> = headers.get_all(UPGRADE).iter().cloned().collect();
    strip(headers);
    for value in upgrade {
        headers.append(UPGRADE, value);
    }
    headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upgrade_keeps_upgrade_and_connection_upgrade_alone() {
        let mut headers = HeaderMap::new();
        for (name, value) in [
            ("connection", "keep-alive, Upgrade, X-Secret"),
            ("upgrade", "websocket"),
            ("x-secret", "1"),
            ("keep-alive", "timeout=5"),
            ("proxy-authorization", "Basic eA=="),
            ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ] {
            headers.append(name, HeaderValue::from_static(value));
        }
        let mut plain = headers.clone();
        strip(&mut plain);
        assert_eq!(
            plain.keys().map(|k| k.as_str()).collect::<Vec<_>>(),
            ["sec-websocket-key"]
        );
        strip_but_upgrade(&mut headers);
        assert_eq!(headers.len(), 3);
        assert_eq!(headers[UPGRADE], "websocket");
        assert_eq!(headers[CONNECTION], "upgrade");
        assert!(headers.contains_key("sec-websocket-key"));
    }
}
