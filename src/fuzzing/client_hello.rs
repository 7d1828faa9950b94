//! The tunnel's ClientHello reader (`client_hello::server_name`) against rustls' own server
//! side: whatever rustls accepts as a ClientHello, ours reads as one with the same name (or
//! refuses as malformed), never as "no name", another name, not TLS, or unfinished; and
//! what ours decides on the first bytes it decides on all of them.

use std::io::Read;

use super::rng::Rng;
use crate::egress::client_hello::{server_name, Hello};

/// The server name rustls' acceptor reads from `data`: `None` when it accepts no
/// ClientHello there, `Some(None)` for one without a name.
fn rustls_sees(mut data: &[u8]) -> Option<Option<String>> {
    let mut acceptor = rustls::server::Acceptor::default();
    loop {
        match acceptor.read_tls(&mut data as &mut dyn Read) {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        match acceptor.accept() {
            Ok(Some(accepted)) => {
                let name = accepted.client_hello().server_name().map(str::to_string);
                return Some(name);
            }
            Ok(None) => {}
            Err(_) => return None,
        }
    }
}

fn normal(name: &str) -> String {
    name.strip_suffix('.').unwrap_or(name).to_ascii_lowercase()
}

pub fn check_client_hello(data: &[u8]) {
    let ours = server_name(data);
    for end in Rng::from_bytes(data).cuts(data.len(), false) {
        let early = server_name(&data[..end]);
        if early != Hello::Incomplete {
            assert_eq!(early, ours, "decided on the first {end} bytes");
        }
    }
    let Some(theirs) = rustls_sees(data) else {
        return;
    };
    match (&ours, &theirs) {
        (Hello::Malformed, _) => {}
        (Hello::ServerName(Some(ours)), Some(theirs)) => {
            assert_eq!(ours, &normal(theirs), "a different server name");
        }
        (Hello::ServerName(_), None) => {}
        _ => panic!("rustls reads server name {theirs:?}, ours {ours:?}"),
    }
}
