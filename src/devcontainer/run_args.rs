//! The part of `runArgs` this library honours: options that shape the container without
//! reaching into the host. Anything else — privileges, capabilities, devices, host
//! namespaces, volumes — is refused, since a cloned repository's config is untrusted.

use std::collections::BTreeMap;

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

/// Supported: `-e/--env K=V`, `-l/--label K=V`, `-m/--memory N[b|k|m|g]`, `--cpu-shares N`,
/// `--network/--net none|bridge|NAME` (not `host`), `-h/--hostname`, `-u/--user`,
/// `-w/--workdir`, `--init` (always on); each as `--opt value` or `--opt=value`.
pub fn parse_run_args(args: &[String]) -> Result<RunArgs> {
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
                let (k, val) = v.split_once('=').unwrap_or((&v, ""));
                parsed.env.insert(k.to_string(), val.to_string());
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
                if v == "host" || v.starts_with("container:") {
                    return Err(refuse(
                        &flag,
                        "may not join the host's or another container's network",
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

fn parse_bytes(text: &str, flag: &str) -> Result<i64> {
    let lower = text.to_ascii_lowercase();
    let (digits, unit) = lower.split_at(
        lower
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(lower.len()),
    );
    let n: i64 = digits
        .parse()
        .map_err(|_| refuse(flag, "needs a size like 512m"))?;
    let factor = match unit.trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return Err(refuse(flag, "needs a size like 512m")),
    };
    Ok(n * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_the_subset() {
        let parsed = parse_run_args(&args(&[
            "--env=A=1",
            "-e",
            "B=2",
            "--memory",
            "512m",
            "--network=none",
            "--init",
            "-u",
            "agent",
        ]))
        .unwrap();
        assert_eq!(parsed.env["A"], "1");
        assert_eq!(parsed.env["B"], "2");
        assert_eq!(parsed.memory, Some(512 << 20));
        assert_eq!(parsed.network.as_deref(), Some("none"));
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
        ] {
            let err = parse_run_args(&args(bad)).unwrap_err();
            assert_eq!(err.code, ErrorCode::Devcontainer, "{bad:?}");
        }
    }
}
