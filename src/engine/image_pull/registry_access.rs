//! Whether the engine reaches a registry without verified TLS: the engine's own list of
//! insecure registries (`/info`'s `RegistryConfig`: an `IndexConfigs` entry that is not
//! `Secure`, or an address within `InsecureRegistryCIDRs`, which is `127.0.0.0/8` by
//! dockerd's default). An engine that does not say: a loopback registry only.

use std::net::IpAddr;

use bollard::models::RegistryServiceConfig;

use crate::engine::connection::Engine;
use crate::registry_probe::is_loopback;

/// The host part of `host[:port]` / `[v6]:port`.
fn name_of(host: &str) -> &str {
    match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    }
}

fn in_cidr(ip: IpAddr, cidr: &str) -> bool {
    let Some((net, bits)) = cidr.split_once('/') else {
        return false;
    };
    let (Ok(net), Ok(bits)) = (net.parse::<IpAddr>(), bits.parse::<u32>()) else {
        return false;
    };
    let (a, b, width) = match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u32::from(a) as u128, u32::from(b) as u128, 32),
        (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128),
        _ => return false,
    };
    if bits > width {
        return false;
    }
    let shift = width - bits;
    shift == width || (a >> shift) == (b >> shift)
}

/// Whether `config` lists the registry at `host` as insecure.
fn listed_insecure(config: &RegistryServiceConfig, host: &str) -> bool {
    let name = name_of(host);
    let indexed = config.index_configs.as_ref().and_then(|indexes| {
        [host, name]
            .iter()
            .find_map(|key| indexes.get(*key))
            .and_then(|index| index.secure)
    });
    if let Some(secure) = indexed {
        return !secure;
    }
    // A name is resolved by the engine; only `localhost`'s addresses are known here.
    let ips: Vec<IpAddr> = match name.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) if name.eq_ignore_ascii_case("localhost") => {
            vec![[127, 0, 0, 1].into(), std::net::Ipv6Addr::LOCALHOST.into()]
        }
        Err(_) => return false,
    };
    let cidrs = config.insecure_registry_cidrs.iter().flatten();
    cidrs
        .flat_map(|cidr| ips.iter().map(move |ip| in_cidr(*ip, cidr)))
        .any(|inside| inside)
}

/// Whether the engine speaks to the registry at `host` insecurely (plain HTTP or TLS
/// unverified); where its configuration cannot be read, whether `host` is loopback.
pub async fn engine_insecure(engine: &Engine, host: &str) -> bool {
    let info = engine.call("engine info", engine.docker().info()).await;
    match info.ok().and_then(|i| i.registry_config) {
        Some(config) => listed_insecure(&config, host),
        None => is_loopback(host),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bollard::models::IndexInfo;
    use std::collections::HashMap;

    fn config(cidrs: &[&str], indexes: &[(&str, bool)]) -> RegistryServiceConfig {
        RegistryServiceConfig {
            insecure_registry_cidrs: Some(cidrs.iter().map(|c| c.to_string()).collect()),
            index_configs: Some(
                indexes
                    .iter()
                    .map(|(name, secure)| {
                        let info = IndexInfo {
                            name: Some(name.to_string()),
                            secure: Some(*secure),
                            ..Default::default()
                        };
                        (name.to_string(), info)
                    })
                    .collect::<HashMap<_, _>>(),
            ),
            ..Default::default()
        }
    }

    #[test]
    fn the_engines_own_insecure_registries_decide() {
        // dockerd's default, as its /info gives it (with its default registry, secure).
        let dockerd = config(&["127.0.0.0/8"], &[("registry.example", true)]);
        assert!(listed_insecure(&dockerd, "127.0.0.1:5000"));
        assert!(listed_insecure(&dockerd, "127.9.9.9:1"));
        assert!(listed_insecure(&dockerd, "localhost:5000"));
        assert!(!listed_insecure(&dockerd, "10.0.0.1:5000"));
        assert!(!listed_insecure(&dockerd, "registry.example"));
        // Podman's, from a registries.conf entry `location = "127.0.0.1"`, insecure.
        let podman = config(&[], &[("127.0.0.1", false)]);
        assert!(listed_insecure(&podman, "127.0.0.1:5000"));
        assert!(!listed_insecure(&podman, "127.0.0.2:5000"));
        assert!(!listed_insecure(&podman, "localhost:5000"));
        let named = config(&["10.1.0.0/16"], &[("mirror.example:5000", false)]);
        assert!(listed_insecure(&named, "mirror.example:5000"));
        assert!(listed_insecure(&named, "10.1.200.3"));
        assert!(!listed_insecure(&named, "10.2.0.1"));
        let v6 = config(&["fd00::/8", "::1/128"], &[]);
        assert!(listed_insecure(&v6, "[fd12::1]:5000"));
        assert!(listed_insecure(&v6, "[::1]:5000"));
        assert!(!listed_insecure(&v6, "[fe80::1]:5000"));
        assert!(!in_cidr("1.2.3.4".parse().unwrap(), "1.2.3.0/33"));
        assert!(in_cidr("1.2.3.4".parse().unwrap(), "0.0.0.0/0"));
    }
}
