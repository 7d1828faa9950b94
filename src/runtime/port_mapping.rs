//! Container ports published on the host: what a caller asks for, checked, and as the
//! Engine API's exposed ports and port bindings.

use std::collections::HashMap;

use bollard::models::{PortBinding, PortMap};

use crate::error::{Error, Result};

/// Where a port is published when the caller names no address: this machine only, so that
/// a session's server is not reachable from the network unless the host asks for it.
pub const DEFAULT_HOST_IP: &str = "127.0.0.1";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortMapping {
    /// 0: the engine picks a free port.
    pub host: u16,
    pub container: u16,
    /// Default `DEFAULT_HOST_IP`; `0.0.0.0` publishes on every interface.
    pub host_ip: Option<String>,
    /// `tcp` (default) or `udp`.
    pub protocol: Option<String>,
}

impl PortMapping {
    /// `8080/tcp`, the engine's key for a container port.
    fn key(&self) -> String {
        format!(
            "{}/{}",
            self.container,
            self.protocol.as_deref().unwrap_or("tcp")
        )
    }

    fn check(&self) -> Result<()> {
        if self.container == 0 {
            return Err(Error::invalid_argument(
                "ports: a container port must be between 1 and 65535",
            ));
        }
        if let Some(protocol) = &self.protocol {
            if !["tcp", "udp", "sctp"].contains(&protocol.as_str()) {
                return Err(Error::invalid_argument(format!(
                    "ports: protocol '{protocol}' is not tcp, udp or sctp"
                )));
            }
        }
        if let Some(ip) = &self.host_ip {
            if ip.parse::<std::net::IpAddr>().is_err() {
                return Err(Error::invalid_argument(format!(
                    "ports: hostIp '{ip}' is not an IP address"
                )));
            }
        }
        Ok(())
    }
}

/// Rejects bad ports and a host port asked for twice.
pub fn check_ports(ports: &[PortMapping]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    for port in ports {
        port.check()?;
        let ip = port.host_ip.as_deref().unwrap_or(DEFAULT_HOST_IP);
        let protocol = port.protocol.as_deref().unwrap_or("tcp");
        if port.host != 0 && !seen.insert((ip, port.host, protocol)) {
            return Err(Error::invalid_argument(format!(
                "ports: host port {ip}:{} is published twice",
                port.host
            )));
        }
    }
    Ok(())
}

/// The create request's `ExposedPorts` and `HostConfig.PortBindings`.
pub fn engine_ports(ports: &[PortMapping]) -> Option<(Vec<String>, PortMap)> {
    if ports.is_empty() {
        return None;
    }
    let mut bindings: PortMap = HashMap::new();
    for port in ports {
        let binding = PortBinding {
            host_ip: Some(
                port.host_ip
                    .clone()
                    .unwrap_or_else(|| DEFAULT_HOST_IP.into()),
            ),
            host_port: Some(if port.host == 0 {
                String::new()
            } else {
                port.host.to_string()
            }),
        };
        bindings
            .entry(port.key())
            .or_insert_with(|| Some(Vec::new()))
            .get_or_insert_with(Vec::new)
            .push(binding);
    }
    let mut exposed: Vec<String> = bindings.keys().cloned().collect();
    exposed.sort();
    Some((exposed, bindings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(host: u16, container: u16) -> PortMapping {
        PortMapping {
            host,
            container,
            host_ip: None,
            protocol: None,
        }
    }

    #[test]
    fn published_on_loopback_unless_asked() {
        let (exposed, bindings) = engine_ports(&[port(8080, 80), port(0, 81)]).unwrap();
        assert_eq!(exposed, ["80/tcp", "81/tcp"]);
        let b = bindings["80/tcp"].as_ref().unwrap();
        assert_eq!(b[0].host_ip.as_deref(), Some("127.0.0.1"));
        assert_eq!(b[0].host_port.as_deref(), Some("8080"));
        assert_eq!(
            bindings["81/tcp"].as_ref().unwrap()[0].host_port.as_deref(),
            Some("")
        );
    }

    #[test]
    fn bad_ports_are_invalid() {
        assert!(check_ports(&[port(1, 0)]).is_err());
        assert!(check_ports(&[port(8080, 80), port(8080, 81)]).is_err());
        let mut p = port(1, 2);
        p.host_ip = Some("localhost".into());
        assert!(check_ports(&[p]).is_err());
        assert!(check_ports(&[port(0, 80), port(0, 81)]).is_ok());
    }
}
