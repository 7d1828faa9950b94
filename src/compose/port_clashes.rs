//! Two services listening on the same container port cannot both run in a session: its
//! services share one network namespace. Found before anything is made, naming both
//! services and the port.

use std::collections::BTreeMap;

use super::compose_plan::PlannedService;

/// The most ports (ranges expanded) the services may name together.
const PORT_LIMIT: usize = 65_536;

/// `Err` names the first clash.
pub fn check_port_clashes(services: &[PlannedService]) -> Result<(), String> {
    let count: usize = services.iter().map(|s| s.ports.len()).sum();
    if count > PORT_LIMIT {
        return Err(format!(
            "the services listen on {count} ports, more than the {PORT_LIMIT} a session serves"
        ));
    }
    let mut listening: BTreeMap<(u16, &str), &str> = BTreeMap::new();
    for service in services {
        for port in &service.ports {
            let key = (port.container_port, port.protocol.as_str());
            match listening.get(&key) {
                Some(other) if *other != service.name => {
                    return Err(format!(
                        "services '{other}' and '{}' both listen on container port {}/{}: a session's services share one network namespace, so only one of them can (change one's port, or leave one out with runServices)",
                        service.name, port.container_port, port.protocol
                    ));
                }
                _ => {
                    listening.insert(key, &service.name);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compose::compose_plan::ServicePort;

    fn service(name: &str, ports: &[(u16, &str, &'static str)]) -> PlannedService {
        PlannedService {
            name: name.into(),
            ports: ports
                .iter()
                .map(|(port, protocol, field)| ServicePort {
                    container_port: *port,
                    protocol: protocol.to_string(),
                    host_port: None,
                    host_ip: None,
                    field,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn one_listener_per_port_and_protocol() {
        let fine = [
            service("db", &[(5432, "tcp", "ports"), (5432, "tcp", "expose")]),
            service("dns", &[(53, "udp", "expose")]),
            service("web", &[(53, "tcp", "ports")]),
        ];
        assert!(check_port_clashes(&fine).is_ok());
        let clash = [
            service("cache", &[(6379, "tcp", "expose")]),
            service("queue", &[(6379, "tcp", "ports")]),
        ];
        let e = check_port_clashes(&clash).unwrap_err();
        assert!(
            e.starts_with("services 'cache' and 'queue' both listen on container port 6379/tcp"),
            "{e}"
        );
    }
}
