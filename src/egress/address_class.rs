//! Which addresses are never the public internet (loopback, private, shared, link-local,
//! multicast, reserved; IPv6 forms that embed one of those IPv4 addresses), and this
//! machine's own addresses.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const HOST_ADDRESSES_FRESH: Duration = Duration::from_secs(2);

/// Why `addr` is not on the public internet, or `None` when it is.
pub fn special_kind(addr: IpAddr) -> Option<&'static str> {
    match addr {
        IpAddr::V4(v4) => v4_kind(v4),
        IpAddr::V6(v6) => v6_kind(v6),
    }
}

fn in_v4(addr: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(addr) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn v4_kind(a: Ipv4Addr) -> Option<&'static str> {
    const KINDS: &[([u8; 4], u32, &str)] = &[
        ([169, 254, 169, 254], 32, "the cloud metadata address"),
        ([0, 0, 0, 0], 8, "an unspecified or 'this network' address"),
        ([127, 0, 0, 0], 8, "a loopback address"),
        ([10, 0, 0, 0], 8, "a private address (RFC 1918)"),
        ([172, 16, 0, 0], 12, "a private address (RFC 1918)"),
        ([192, 168, 0, 0], 16, "a private address (RFC 1918)"),
        (
            [100, 64, 0, 0],
            10,
            "a shared address (100.64.0.0/10, carrier-grade NAT)",
        ),
        ([169, 254, 0, 0], 16, "a link-local address"),
        ([192, 0, 0, 0], 24, "an IETF protocol address"),
        ([224, 0, 0, 0], 4, "a multicast address"),
        ([240, 0, 0, 0], 4, "a reserved address"),
    ];
    KINDS
        .iter()
        .find(|(net, prefix, _)| in_v4(a, *net, *prefix))
        .map(|(_, _, kind)| *kind)
}

fn v6_kind(a: Ipv6Addr) -> Option<&'static str> {
    let bits = u128::from(a);
    let seg = a.segments();
    if a.is_unspecified() {
        return Some("an unspecified address");
    }
    if a.is_loopback() {
        return Some("a loopback address");
    }
    if let Some(v4) = a.to_ipv4_mapped() {
        return v4_kind(v4);
    }
    // IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::/96) carry an IPv4 address at the end.
    if bits >> 32 == 0 || bits >> 32 == 0x0064_ff9b_0000_0000_0000_0000 {
        return v4_kind(Ipv4Addr::from(bits as u32));
    }
    // The local-use translation prefix (RFC 8215) is never global, and which IPv4 address
    // sits inside depends on the prefix length a site gives it: all of it is special.
    if bits >> 80 == 0x0064_ff9b_0001 {
        return Some("a local-use NAT64 address (64:ff9b:1::/48)");
    }
    if seg[0] == 0x2002 {
        let embedded = ((u32::from(seg[1])) << 16) | u32::from(seg[2]);
        return v4_kind(Ipv4Addr::from(embedded));
    }
    match seg[0] {
        s if s & 0xfe00 == 0xfc00 => Some("a unique local address (fc00::/7)"),
        s if s & 0xffc0 == 0xfe80 => Some("a link-local address"),
        s if s & 0xffc0 == 0xfec0 => Some("a private address (site-local)"),
        s if s & 0xff00 == 0xff00 => Some("a multicast address"),
        0x0100 if seg[1..4] == [0, 0, 0] => Some("a reserved address"),
        _ => None,
    }
}

/// Every address of this machine's interfaces, read at most once per two seconds.
pub fn host_addresses() -> Vec<IpAddr> {
    static CACHE: Mutex<Option<(Instant, Vec<IpAddr>)>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((read, addresses)) = cache.as_ref() {
        if read.elapsed() < HOST_ADDRESSES_FRESH {
            return addresses.clone();
        }
    }
    let addresses = interface_addresses();
    *cache = Some((Instant::now(), addresses.clone()));
    addresses
}

fn interface_addresses() -> Vec<IpAddr> {
    let mut found = vec![
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(Ipv6Addr::LOCALHOST),
    ];
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list`, freed below with freeifaddrs; each entry's address is
    // read only after checking its family, as the length it has.
    unsafe {
        if libc::getifaddrs(&mut list) != 0 {
            return found;
        }
        let mut entry = list;
        while !entry.is_null() {
            let addr = (*entry).ifa_addr;
            if !addr.is_null() {
                match i32::from((*addr).sa_family) {
                    libc::AF_INET => {
                        let sin = &*(addr as *const libc::sockaddr_in);
                        found.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                            sin.sin_addr.s_addr,
                        ))));
                    }
                    libc::AF_INET6 => {
                        let sin6 = &*(addr as *const libc::sockaddr_in6);
                        found.push(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)));
                    }
                    _ => {}
                }
            }
            entry = (*entry).ifa_next;
        }
        libc::freeifaddrs(list);
    }
    found.sort();
    found.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<&'static str> {
        special_kind(text.parse().unwrap())
    }

    #[test]
    fn non_public_addresses_say_what_they_are() {
        assert_eq!(kind("127.0.0.1"), Some("a loopback address"));
        assert_eq!(kind("10.1.2.3"), Some("a private address (RFC 1918)"));
        assert_eq!(kind("172.31.0.1"), Some("a private address (RFC 1918)"));
        assert_eq!(kind("192.168.1.1"), Some("a private address (RFC 1918)"));
        assert!(kind("100.64.0.1").unwrap().contains("shared"));
        assert_eq!(kind("169.254.169.254"), Some("the cloud metadata address"));
        assert_eq!(kind("169.254.1.1"), Some("a link-local address"));
        assert_eq!(kind("224.0.0.1"), Some("a multicast address"));
        assert_eq!(kind("255.255.255.255"), Some("a reserved address"));
        assert!(kind("0.0.0.0").is_some());
        assert_eq!(kind("::1"), Some("a loopback address"));
        assert_eq!(kind("::ffff:127.0.0.1"), Some("a loopback address"));
        assert_eq!(kind("::127.0.0.1"), Some("a loopback address"));
        assert_eq!(
            kind("64:ff9b::a9fe:a9fe"),
            Some("the cloud metadata address")
        );
        assert_eq!(kind("2002:7f00:1::"), Some("a loopback address"));
        assert!(kind("64:ff9b:1::7f00:1").unwrap().contains("NAT64"));
        assert!(kind("64:ff9b:1:ffff::a9fe:a9fe").unwrap().contains("NAT64"));
        assert!(kind("fd00::1").unwrap().contains("unique local"));
        assert_eq!(kind("fe80::1"), Some("a link-local address"));
        assert_eq!(kind("ff02::1"), Some("a multicast address"));
        assert_eq!(kind("100::1"), Some("a reserved address"));
    }

    #[test]
    fn public_and_documentation_addresses_are_public() {
        for public in [
            "8.8.8.8",
            "203.0.113.2",
            "198.51.100.1",
            "192.0.2.1",
            "198.18.0.1",
            "2606:4700::1111",
            "2001:db8::1",
            "172.32.0.1",
        ] {
            assert_eq!(kind(public), None, "{public}");
        }
    }

    #[test]
    fn this_machine_has_its_loopback_address() {
        assert!(host_addresses().contains(&IpAddr::V4(Ipv4Addr::LOCALHOST)));
    }
}
