//! Values of a compose service's keys as the plan holds them, from the compose
//! specification's typed model: argv of a command, `NAME=value` lists, a healthcheck in
//! milliseconds, the ports of `ports` and `expose`; and the one rewrite compose_spec needs
//! before it reads `volumes`.

use compose_spec::service::healthcheck::Test;
use compose_spec::service::{ports, Command, Healthcheck as SpecHealthcheck};
use compose_spec::{ListOrMap, Service};
use serde_yaml::Value;

use super::compose_plan::{Healthcheck, ServicePort};

fn millis(d: Option<std::time::Duration>) -> Option<u64> {
    d.map(|d| d.as_millis().min(u128::from(u64::MAX)) as u64)
}

/// A list of `NAME=value` (`NAME` alone: no value) or a mapping, as compose reads it: an
/// empty value is the empty string (compose_spec's `into_map` would drop it).
pub fn name_values(values: ListOrMap) -> Vec<(String, Option<String>)> {
    match values {
        ListOrMap::List(items) => items
            .into_iter()
            .map(|item| match item.split_once('=') {
                Some((key, value)) => (key.to_string(), Some(value.to_string())),
                None => (item, None),
            })
            .collect(),
        ListOrMap::Map(map) => map
            .into_iter()
            .map(|(key, value)| (key.to_string(), value.map(|v| v.to_string())))
            .collect(),
    }
}

/// Short volume entries without `cached`, `delegated` and `consistent`: options of Docker
/// Desktop's file sharing that compose accepts and Linux engines ignore (compose_spec would
/// refuse them).
pub fn without_consistency(volumes: &Value) -> Value {
    let Value::Sequence(items) = volumes else {
        return volumes.clone();
    };
    let items = items
        .iter()
        .map(|item| match item {
            Value::String(short) if short.matches(':').count() >= 2 => {
                let (paths, options) = short.rsplit_once(':').expect("two colons");
                let kept: Vec<&str> = options
                    .split(',')
                    .filter(|o| !matches!(*o, "cached" | "delegated" | "consistent"))
                    .collect();
                Value::String(match kept.is_empty() {
                    true => paths.to_string(),
                    false => format!("{paths}:{}", kept.join(",")),
                })
            }
            other => other.clone(),
        })
        .collect();
    Value::Sequence(items)
}

pub fn argv(command: Command, field: &str) -> Result<Vec<String>, String> {
    match command {
        Command::List(list) => Ok(list),
        Command::String(text) => {
            shlex::split(&text).ok_or_else(|| format!("{field}: '{text}' has an unclosed quote"))
        }
    }
}

pub fn healthcheck(check: SpecHealthcheck) -> Healthcheck {
    match check {
        SpecHealthcheck::Disable => Healthcheck {
            test: vec!["NONE".into()],
            ..Default::default()
        },
        SpecHealthcheck::Command(c) => Healthcheck {
            test: match c.test {
                Some(Test::Command(argv)) => {
                    std::iter::once("CMD".to_string()).chain(argv).collect()
                }
                Some(Test::ShellCommand(shell)) => vec!["CMD-SHELL".into(), shell],
                None => Vec::new(),
            },
            interval_ms: millis(c.interval),
            timeout_ms: millis(c.timeout),
            retries: c.retries,
            start_period_ms: millis(c.start_period),
            start_interval_ms: millis(c.start_interval),
        },
    }
}

pub fn service_ports(service: &Service) -> Vec<ServicePort> {
    let mut out: Vec<ServicePort> = ports::into_long_iter(service.ports.clone())
        .map(|p| ServicePort {
            container_port: p.target,
            protocol: p
                .protocol
                .as_ref()
                .map_or("tcp".to_string(), |p| p.to_string()),
            host_port: p.published.map(|r| r.start()),
            host_ip: p.host_ip.map(|ip| ip.to_string()),
            field: "ports",
        })
        .collect();
    for expose in &service.expose {
        let protocol = expose
            .protocol
            .as_ref()
            .map_or("tcp".to_string(), |p| p.to_string());
        for port in expose.range.into_iter() {
            out.push(ServicePort {
                container_port: port,
                protocol: protocol.clone(),
                host_port: None,
                host_ip: None,
                field: "expose",
            });
        }
    }
    out
}
