//! The egress policy's refusal by name against every spelling of a denied name: whatever a
//! client writes as a SOCKS5 domain, a CONNECT target or an absolute URI's authority, when
//! the host our parser hands the gate is, for a resolver, a denied name (or one below a
//! denied `*.suffix`, or an engine's name for the host), the policy refuses it by name,
//! before any lookup. A resolver's reading is modelled on the C library's: case folded,
//! `\DDD` and `\X` escapes read, one trailing dot allowed, no empty label.

use crate::egress::egress_policy::Rules;
use crate::egress::http_head::host_port;
use crate::egress::socks5::domain_name;

const DENIED: &str = "evil.test";
const ENGINE_NAMES: [&str; 3] = [
    "host.docker.internal",
    "gateway.docker.internal",
    "host.containers.internal",
];

/// The labels a resolver asks for when given `name`, lower-cased; `None` for a name it
/// refuses.
pub fn resolver_labels(name: &str) -> Option<Vec<Vec<u8>>> {
    let bytes = name.as_bytes();
    let (mut labels, mut label) = (Vec::new(), Vec::new());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => {
                let digits = bytes
                    .get(at + 1..at + 4)
                    .filter(|d| d.iter().all(u8::is_ascii_digit));
                if let Some(d) = digits {
                    let value = d.iter().fold(0u32, |n, b| n * 10 + u32::from(b - b'0'));
                    label.push(u8::try_from(value).ok()?);
                    at += 4;
                    continue;
                }
                label.push(*bytes.get(at + 1)?);
                at += 2;
                continue;
            }
            b'.' if label.is_empty() => return None,
            b'.' => labels.push(std::mem::take(&mut label)),
            b => label.push(b),
        }
        at += 1;
    }
    if !label.is_empty() {
        labels.push(label);
    }
    if labels.is_empty() || labels.iter().any(|l| l.len() > 63) {
        return None;
    }
    Some(labels.into_iter().map(|l| l.to_ascii_lowercase()).collect())
}

fn labels_of(name: &str) -> Vec<Vec<u8>> {
    name.split('.').map(|l| l.as_bytes().to_vec()).collect()
}

/// Whether a resolver asked for `host` asks for a name the rules below deny.
fn resolves_to_denied(host: &str) -> bool {
    let Some(labels) = resolver_labels(host) else {
        return false;
    };
    let denied = labels_of(DENIED);
    let below = labels.len() > denied.len() && labels.ends_with(&denied);
    below || labels == denied || ENGINE_NAMES.iter().any(|n| labels == labels_of(n))
}

/// The host each way in hands the gate for `spelling`.
fn entrances(spelling: &[u8]) -> Vec<(&'static str, String)> {
    let mut hosts = Vec::new();
    if let Ok(host) = domain_name(spelling) {
        hosts.push(("a SOCKS5 domain", host));
    }
    if let Ok(text) = std::str::from_utf8(spelling) {
        if let Ok((host, _)) = host_port(&format!("{text}:443"), None) {
            hosts.push(("a CONNECT target", host));
        }
        if let Ok((host, _)) = host_port(text, Some(80)) {
            hosts.push(("an absolute URI", host));
        }
    }
    hosts
}

pub fn check_egress_names(spelling: &[u8]) {
    let deny = [DENIED.to_string(), format!("*.{DENIED}")];
    let rules = Rules::parse(&["*".to_string()], &deny).expect("the rules parse");
    for (entrance, host) in entrances(spelling) {
        if resolves_to_denied(&host) {
            assert!(
                rules.refuses_name(&host, 443).is_some(),
                "{entrance} {:?} reaches the gate as {host:?}, a denied name, and is not refused",
                spelling.escape_ascii().to_string()
            );
        }
    }
}
