//! The part of `runArgs` this library honours: options that shape the container without
//! reaching into the host. Anything else — privileges, capabilities, devices, host
//! namespaces, volumes — is refused, since a cloned repository's config is untrusted.

use std::collections::{BTreeMap, HashMap};

use crate::error::{Error, ErrorCode, Result};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunArgs {
    pub env: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    pub memory: Option<i64>,
    pub cpu_shares: Option<i64>,
    pub network: Option<String>,
    pub hostname: Option<String>,
    pub user: Option<String>,
    pub workdir: Option<String>,
}

/// Supported: `-e/--env K=V` (a bare `K` takes the host's value, as docker does, and is left
/// out when the host has none), `-l/--label K[=V]`, `-m/--memory N[b|k|m|g]`, `--cpu-shares N`,
/// `--network/--net none|bridge|NAME` (not `host`, `container:…`, `ns:…` or other modes),
/// `-h/--hostname`, `-u/--user`, `-w/--workdir`, `--init` (always on); each as `--opt value`
/// or `--opt=value`.
pub fn parse_run_args(args: &[String], local_env: &HashMap<String, String>) -> Result<RunArgs> {
    let mut parsed = RunArgs::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if flag == "--init" {
            i += 1;
            continue;
        }
        let mut value = || -> Result<String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| refuse(&flag, "needs a value"))
        };
        match flag.as_str() {
            "-e" | "--env" => {
                let v = value()?;
                match v.split_once('=') {
                    Some((k, val)) => {
                        parsed.env.insert(k.to_string(), val.to_string());
                    }
                    None => {
                        if let Some(val) = local_env.get(&v) {
                            parsed.env.insert(v.clone(), val.clone());
                        }
                    }
                }
            }
            "-l" | "--label" => {
                let v = value()?;
                let (k, val) = v.split_once('=').unwrap_or((&v, ""));
                parsed.labels.insert(k.to_string(), val.to_string());
            }
            "-m" | "--memory" => parsed.memory = Some(parse_bytes(&value()?, &flag)?),
            "--cpu-shares" => {
                parsed.cpu_shares = Some(
                    value()?
                        .parse()
                        .map_err(|_| refuse(&flag, "needs a number"))?,
                )
            }
            "--network" | "--net" => {
                let v = value()?;
                if !is_network_name(&v) {
                    return Err(refuse(
                        &flag,
                        "takes none, bridge or a network's name (not the host's or another container's network)",
                    ));
                }
                parsed.network = Some(v);
            }
            "-h" | "--hostname" => parsed.hostname = Some(value()?),
            "-u" | "--user" => parsed.user = Some(value()?),
            "-w" | "--workdir" => parsed.workdir = Some(value()?),
            _ => return Err(refuse(&flag, "is not in the supported subset of runArgs")),
        }
        i += 1;
    }
    Ok(parsed)
}

fn refuse(flag: &str, why: &str) -> Error {
    Error::new(ErrorCode::Devcontainer, format!("runArgs '{flag}' {why}"))
}

/// `none`, `bridge` or a user-defined network's name: no mode that reaches the host's or
/// another container's namespace (`host`, `container:…`, Podman's `ns:…`, `slirp4netns:…`).
fn is_network_name(name: &str) -> bool {
    let mut chars = name.chars();
    name != "host"
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// `512m`, `1.5g`, `1024` (bytes), as docker reads `--memory`.
fn parse_bytes(text: &str, flag: &str) -> Result<i64> {
    let bad = || refuse(flag, "needs a size like 512m");
    let lower = text.trim().to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(lower.len());
    let (number, unit) = lower.split_at(split);
    let n: f64 = number.parse().map_err(|_| bad())?;
    let factor = match unit.trim_end_matches('b') {
        "" => 1u64,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return Err(bad()),
    };
    let bytes = n * factor as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes > i64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn parse(list: &[&str]) -> Result<RunArgs> {
        let host = HashMap::from([("FROM_HOST".to_string(), "h".to_string())]);
        parse_run_args(&args(list), &host)
    }

    #[test]
    fn parses_the_subset() {
        let parsed = parse(&[
            "--env=A=1",
            "-e",
            "B=2",
            "--memory",
            "512m",
            "--network=none",
            "--init",
            "-u",
            "agent",
            "-e",
            "FROM_HOST",
            "-e",
            "NOT_ON_HOST",
            "--label",
            "flag",
            "--memory=1.5g",
            "--net",
            "my-net_1",
        ])
        .unwrap();
        assert_eq!(parsed.env["A"], "1");
        assert_eq!(parsed.env["B"], "2");
        assert_eq!(parsed.env["FROM_HOST"], "h");
        assert!(!parsed.env.contains_key("NOT_ON_HOST"));
        assert_eq!(parsed.labels["flag"], "");
        assert_eq!(parsed.memory, Some(3 << 29));
        assert_eq!(parsed.network.as_deref(), Some("my-net_1"));
        assert_eq!(parsed.user.as_deref(), Some("agent"));
    }

    #[test]
    fn refuses_what_reaches_the_host() {
        for bad in [
            &["--privileged"][..],
            &["--cap-add", "SYS_ADMIN"],
            &["-v", "/:/host"],
            &["--network", "host"],
            &["--pid=host"],
            &["--device", "/dev/kvm"],
            &["--network=container:other"],
            &["--network=ns:/proc/1/ns/net"],
            &["--net", "slirp4netns:allow_host_loopback=true"],
            &["--env-file", "/etc/shadow"],
            &["--memory", "lots"],
            &["-e"],
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::Devcontainer, "{bad:?}");
        }
    }
}
