//! `forwardPorts` and `appPort`: the container ports a session serves on the host, each
//! with the host port asked for (`appPort`'s `HOST:CONTAINER`) or none (`forwardPorts`:
//! the same number where it is free). Entries that name another container or do not
//! parse are warned about, never guessed at.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortRequest {
    pub container_port: u16,
    pub host_port: Option<u16>,
    /// `forwardPorts` or `appPort`.
    pub field: String,
}

fn port(text: &str) -> Option<u16> {
    text.parse::<u16>()
        .ok()
        .filter(|p| *p > 0 && text.bytes().all(|b| b.is_ascii_digit()))
}

fn number(value: &Value) -> Option<u16> {
    value
        .as_u64()
        .and_then(|n| u16::try_from(n).ok())
        .filter(|p| *p > 0)
}

fn forward_entry(value: &Value) -> Result<PortRequest, String> {
    let request = |container_port| PortRequest {
        container_port,
        host_port: None,
        field: "forwardPorts".into(),
    };
    if let Some(n) = number(value) {
        return Ok(request(n));
    }
    let text = value.as_str().ok_or("not a port number or \"host:port\"")?;
    let (host, p) = text.rsplit_once(':').unwrap_or(("localhost", text));
    match (host, port(p)) {
        ("localhost" | "127.0.0.1", Some(n)) => Ok(request(n)),
        (_, Some(_)) => {
            Err("a port of another container (Docker Compose), which a session does not run".into())
        }
        _ => Err("not a port number or \"host:port\"".into()),
    }
}

fn app_entry(value: &Value) -> Result<(PortRequest, Option<String>), String> {
    let request = |host_port, container_port| PortRequest {
        container_port,
        host_port: Some(host_port),
        field: "appPort".into(),
    };
    if let Some(n) = number(value) {
        return Ok((request(n, n), None));
    }
    let text = value
        .as_str()
        .ok_or("not a port number or \"[ip:]host:container\"")?;
    let parts: Vec<&str> = text.split(':').collect();
    let ports = |h: &str, c: &str| port(h).zip(port(c));
    match parts.as_slice() {
        [one] => port(one).map(|n| (request(n, n), None)),
        [h, c] => ports(h, c).map(|(h, c)| (request(h, c), None)),
        [ip, h, c] => ports(h, c).map(|(h, c)| {
            let note = (*ip != "127.0.0.1" && *ip != "localhost")
                .then(|| format!("appPort '{text}': served on 127.0.0.1 only, not on {ip}"));
            (request(h, c), note)
        }),
        _ => None,
    }
    .ok_or_else(|| "not a port number or \"[ip:]host:container\"".into())
}

/// The requests of `forwardPorts` then `appPort`, and a warning for each entry left out.
pub fn parse_port_requests(map: &Map<String, Value>) -> (Vec<PortRequest>, Vec<String>) {
    let mut requests = Vec::new();
    let mut warnings = Vec::new();
    let entries = |key: &str| match map.get(key) {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::Null) | None => Vec::new(),
        Some(one) => vec![one.clone()],
    };
    for entry in entries("forwardPorts") {
        match forward_entry(&entry) {
            Ok(request) => requests.push(request),
            Err(why) => warnings.push(format!("forwardPorts entry {entry} was ignored: {why}")),
        }
    }
    for entry in entries("appPort") {
        match app_entry(&entry) {
            Ok((request, note)) => {
                requests.push(request);
                warnings.extend(note);
            }
            Err(why) => warnings.push(format!("appPort entry {entry} was ignored: {why}")),
        }
    }
    (requests, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Vec<(u16, Option<u16>)>, Vec<String>) {
        let Value::Object(map) = serde_json::from_str(text).unwrap() else {
            panic!()
        };
        let (requests, warnings) = parse_port_requests(&map);
        (
            requests
                .iter()
                .map(|r| (r.container_port, r.host_port))
                .collect(),
            warnings,
        )
    }

    #[test]
    fn forward_ports_and_app_ports_in_every_spelling() {
        let (ports, warnings) = parse(
            r#"{ "forwardPorts": [3000, "5432", "localhost:8080", "db:5432", "x"],
                 "appPort": ["127.0.0.1:2222:2222", 8000, "9000:80", "0.0.0.0:1:2"] }"#,
        );
        assert_eq!(
            ports,
            [
                (3000, None),
                (5432, None),
                (8080, None),
                (2222, Some(2222)),
                (8000, Some(8000)),
                (80, Some(9000)),
                (2, Some(1))
            ]
        );
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].contains("\"db:5432\"") && warnings[0].contains("another container"));
        assert!(warnings[2].contains("127.0.0.1 only"));
        assert_eq!(parse(r#"{ "appPort": 3000 }"#).0, [(3000, Some(3000))]);
        assert_eq!(parse(r#"{ "forwardPorts": [0, 70000] }"#).1.len(), 2);
    }
}
