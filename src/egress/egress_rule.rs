//! One allow or deny entry of an egress policy: `*`, a name, `*.suffix`, an address or a
//! CIDR range, each with an optional port.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `*`: every name and every address.
    Any,
    /// An exact name, lower-cased, without a trailing dot.
    Name(String),
    /// `*.example.com` as `example.com`: every name below it, not the name itself.
    Suffix(String),
    Net {
        addr: IpAddr,
        prefix: u8,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub target: Target,
    pub port: Option<u16>,
    pub text: String,
}

impl Rule {
    pub fn parse(text: &str) -> Result<Rule, String> {
        let trimmed = text.trim();
        let fail = |why: &str| format!("egress entry '{trimmed}': {why}");
        if trimmed.is_empty() {
            return Err(fail("empty"));
        }
        let (host, port) = split_port(trimmed).map_err(|why| fail(&why))?;
        let target = parse_target(host).map_err(|why| fail(&why))?;
        Ok(Rule {
            target,
            port,
            text: trimmed.to_string(),
        })
    }

    pub fn port_matches(&self, port: u16) -> bool {
        self.port.is_none_or(|p| p == port)
    }

    /// Whether this rule names `host` (a name or an IP literal, as asked) on `port`.
    pub fn matches_name(&self, host: &str, port: u16) -> bool {
        if !self.port_matches(port) {
            return false;
        }
        let host = normal_name(host);
        match &self.target {
            Target::Any => true,
            Target::Name(name) => *name == host,
            Target::Suffix(suffix) => host
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            Target::Net { .. } => false,
        }
    }

    /// Whether this rule names exactly `host` (no `*`, no `*.suffix`) on `port`.
    pub fn names_exactly(&self, host: &str, port: u16) -> bool {
        self.port_matches(port) && self.target == Target::Name(normal_name(host))
    }

    /// Whether this is an address rule that covers `addr` on `port`.
    pub fn covers_address(&self, addr: IpAddr, port: u16) -> bool {
        let Target::Net { addr: net, prefix } = self.target else {
            return false;
        };
        self.port_matches(port) && in_net(addr, net, prefix)
    }

    pub fn is_address_rule(&self) -> bool {
        matches!(self.target, Target::Net { .. })
    }
}

/// A name as rules compare it: lower case, brackets and one trailing dot gone.
pub fn normal_name(host: &str) -> String {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("an unclosed '['")?;
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(parse_port(port)?))),
                None => Err("text after ']' that is not ':PORT'".into()),
            },
        };
    }
    match text.matches(':').count() {
        0 => Ok((text, None)),
        1 => {
            let (host, port) = text.split_once(':').unwrap_or((text, ""));
            Ok((host, Some(parse_port(port)?)))
        }
        // A bare IPv6 address or range: no port without brackets.
        _ => Ok((text, None)),
    }
}

fn parse_port(text: &str) -> Result<u16, String> {
    match text.parse::<u16>() {
        Ok(port) if port > 0 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(port),
        _ => Err(format!("'{text}' is not a port (1-65535)")),
    }
}

fn parse_target(host: &str) -> Result<Target, String> {
    if host == "*" {
        return Ok(Target::Any);
    }
    if let Some((addr, prefix)) = host.split_once('/') {
        return parse_net(addr, prefix);
    }
    if let Ok(addr) = host.parse::<IpAddr>() {
        let prefix = if addr.is_ipv4() { 32 } else { 128 };
        return Ok(Target::Net { addr, prefix });
    }
    if host.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err("numeric host spellings are not accepted: write the address as a.b.c.d".into());
    }
    if host.contains(':') {
        return Err("not an IP address".into());
    }
    let (wildcard, name) = match host.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, host),
    };
    check_name(name)?;
    let name = normal_name(name);
    Ok(match wildcard {
        true => Target::Suffix(name),
        false => Target::Name(name),
    })
}

fn parse_net(addr: &str, prefix: &str) -> Result<Target, String> {
    let addr: IpAddr = addr
        .parse()
        .map_err(|_| format!("'{addr}' is not an IP address"))?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    let prefix: u8 = prefix
        .parse()
        .ok()
        .filter(|p| *p <= max)
        .ok_or_else(|| format!("'/{prefix}' is not a prefix length (0-{max})"))?;
    let base = masked(addr, prefix);
    if base != addr {
        return Err(format!("host bits are set: use {base}/{prefix}"));
    }
    Ok(Target::Net { addr, prefix })
}

fn check_name(name: &str) -> Result<(), String> {
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.is_empty() || name.len() > 253 {
        return Err("not a host name".into());
    }
    for label in name.split('.') {
        let ok = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !ok {
            return Err(format!(
                "'{label}' is not a host name label ('*' only as '*.name')"
            ));
        }
    }
    Ok(())
}

fn masked(addr: IpAddr, prefix: u8) -> IpAddr {
    match addr {
        IpAddr::V4(v4) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
        }
    }
}

/// Whether `addr` lies in `net/prefix`; an IPv4-mapped IPv6 address counts as its IPv4
/// address, and an IPv4 address as its mapped form.
fn in_net(addr: IpAddr, net: IpAddr, prefix: u8) -> bool {
    let same = |a: IpAddr| masked(a, prefix) == net;
    match (addr, net) {
        (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => same(addr),
        (IpAddr::V6(v6), IpAddr::V4(_)) => v6
            .to_ipv4_mapped()
            .is_some_and(|v4| in_net(IpAddr::V4(v4), net, prefix)),
        (IpAddr::V4(v4), IpAddr::V6(_)) => same(IpAddr::V6(v4.to_ipv6_mapped())),
    }
}

#[cfg(test)]
#[path = "egress_rule_tests.rs"]
mod tests;
