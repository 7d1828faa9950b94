//! The policy's special addresses in every IPv6 form that carries an IPv4 address: when an
//! IPv4 address is not public (`special_kind`), neither is it IPv4-mapped, IPv4-compatible,
//! behind 6to4 (2002::/16) or behind either NAT64 prefix (64:ff9b::/96, 64:ff9b:1::/48);
//! and however an address literal is spelled (brackets, case, zero runs), the gate reads
//! the same address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::egress::address_class::special_kind;

fn embeddings(v4: Ipv4Addr) -> [(&'static str, Ipv6Addr); 5] {
    let bits = u128::from(u32::from(v4));
    let o = v4.octets();
    let six_to_four = Ipv6Addr::new(
        0x2002,
        u16::from_be_bytes([o[0], o[1]]),
        u16::from_be_bytes([o[2], o[3]]),
        0,
        0,
        0,
        0,
        1,
    );
    [
        ("IPv4-mapped", v4.to_ipv6_mapped()),
        ("IPv4-compatible", Ipv6Addr::from(bits)),
        ("6to4", six_to_four),
        ("NAT64", Ipv6Addr::from((0x0064_ff9b_u128 << 96) | bits)),
        (
            "local NAT64",
            Ipv6Addr::from((0x0064_ff9b_0001_u128 << 80) | bits),
        ),
    ]
}

/// Spellings of `addr` as a host in a request: bracketed or not, upper case, every zero
/// run written out.
fn spellings(addr: Ipv6Addr) -> Vec<String> {
    let short = addr.to_string();
    let long = addr.segments().map(|s| format!("{s:x}")).join(":");
    let mut all = vec![short.clone(), long.to_uppercase(), format!("[{short}]")];
    if let Some(v4) = addr.to_ipv4_mapped() {
        all.push(format!("::FFFF:{v4}"));
    }
    all
}

/// What the gate reads a host literal as (`known_addresses`).
fn gate_reads(host: &str) -> Option<IpAddr> {
    host.trim_matches(|c| c == '[' || c == ']').parse().ok()
}

pub fn check_special_addresses(data: &[u8]) {
    let mut octets = [0u8; 4];
    for (i, b) in data.iter().take(4).enumerate() {
        octets[i] = *b;
    }
    let v4 = Ipv4Addr::from(octets);
    let Some(kind) = special_kind(IpAddr::V4(v4)) else {
        return;
    };
    for (form, v6) in embeddings(v4) {
        assert!(
            special_kind(IpAddr::V6(v6)).is_some(),
            "{v4} is {kind}, and {v6} ({form}) counts as public"
        );
        for spelling in spellings(v6) {
            assert_eq!(gate_reads(&spelling), Some(IpAddr::V6(v6)), "{spelling}");
        }
    }
}
