//! The `runArgs` this library understands, parsed without policy: options that shape the
//! container, and those that reach the host (privileges, capabilities, security options,
//! devices, host namespaces, bind mounts), which a session's trust check judges. Any other
//! flag is refused, so that nothing in a config is silently ignored.

use std::collections::BTreeMap;

use super::byte_size::parse_bytes;
use super::host_env::HostEnv;
use super::mount_spec::{parse_mount_text, parse_tmpfs_flag, parse_volume_flag, MountSpec};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::ContainerPrivileges;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunArgs {
    pub env: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    pub memory: Option<i64>,
    pub cpu_shares: Option<i64>,
    /// `--network`/`--net` as written (`host` and `container:…` reach outside the session).
    pub network: Option<String>,
    pub hostname: Option<String>,
    pub user: Option<String>,
    pub workdir: Option<String>,
    /// `--platform` (`os/arch[/variant]`): the image's platform the container is made from.
    pub platform: Option<String>,
    /// `--privileged`, `--cap-add/--cap-drop`, `--security-opt`, `--device`, and `--pid`,
    /// `--ipc`, `--uts`, `--userns`, `--cgroupns`.
    pub privileges: ContainerPrivileges,
    /// `-v/--volume`, `--mount`, `--tmpfs`.
    pub mounts: Vec<MountSpec>,
}

/// Understood: `-e/--env K=V` (a bare `K` takes the host's value, as docker does, and is left
/// out when the host has none or may not be read), `-l/--label K[=V]`, `-m/--memory
/// N[b|k|m|g]`, `--cpu-shares N`, `--network/--net`, `-h/--hostname`, `-u/--user`,
/// `-w/--workdir`, `--platform`, `--init` (always on), `--privileged`, `--cap-add`,
/// `--cap-drop`, `--security-opt`, `--device`, `--pid/--ipc/--uts/--userns/--cgroupns`,
/// `-v/--volume`, `--mount`, `--tmpfs`; each as `--opt value` or `--opt=value`.
pub fn parse_run_args(args: &[String], local_env: &HostEnv) -> Result<RunArgs> {
    let mut parsed = RunArgs::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if flag == "--init" || flag == "--privileged" {
            parsed.privileges.privileged |= flag == "--privileged";
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
        apply(&mut parsed, &flag, &mut value, local_env)?;
        i += 1;
    }
    Ok(parsed)
}

/// One flag of `runArgs` into `parsed`; `value` takes its value (inline or the next argument)
/// only when the flag has one.
fn apply(
    parsed: &mut RunArgs,
    flag: &str,
    value: &mut dyn FnMut() -> Result<String>,
    local_env: &HostEnv,
) -> Result<()> {
    match flag {
        "-e" | "--env" => {
            let v = value()?;
            match v.split_once('=') {
                Some((k, val)) => {
                    parsed.env.insert(k.to_string(), val.to_string());
                }
                None => {
                    if let Some(val) = local_env.get(&v) {
                        parsed.env.insert(v.clone(), val.to_string());
                    }
                }
            }
        }
        "-l" | "--label" => {
            let v = value()?;
            let (k, val) = v.split_once('=').unwrap_or((&v, ""));
            parsed.labels.insert(k.to_string(), val.to_string());
        }
        "-m" | "--memory" => {
            parsed.memory = Some(parse_bytes(&value()?, flag).map_err(|e| refuse_with(&e))?)
        }
        "--cpu-shares" => {
            parsed.cpu_shares = Some(
                value()?
                    .parse()
                    .map_err(|_| refuse(flag, "needs a number"))?,
            )
        }
        "--network" | "--net" => parsed.network = Some(non_empty(value()?, flag)?),
        "-h" | "--hostname" => parsed.hostname = Some(value()?),
        "-u" | "--user" => parsed.user = Some(value()?),
        "-w" | "--workdir" => parsed.workdir = Some(value()?),
        "--platform" => parsed.platform = Some(non_empty(value()?, flag)?),
        "--cap-add" => parsed.privileges.cap_add.push(non_empty(value()?, flag)?),
        "--cap-drop" => parsed.privileges.cap_drop.push(non_empty(value()?, flag)?),
        "--security-opt" => parsed
            .privileges
            .security_opt
            .push(non_empty(value()?, flag)?),
        "--device" => parsed.privileges.devices.push(non_empty(value()?, flag)?),
        "--pid" | "--ipc" | "--uts" | "--userns" | "--cgroupns" => {
            let mode = non_empty(value()?, flag)?;
            parsed
                .privileges
                .namespaces
                .insert(flag.trim_start_matches('-').to_string(), mode);
        }
        "-v" | "--volume" => parsed.mounts.push(
            parse_volume_flag(&value()?, &format!("runArgs {flag}"))
                .map_err(|e| refuse_with(&e))?,
        ),
        "--mount" => parsed.mounts.push(
            parse_mount_text(&value()?, &format!("runArgs {flag}")).map_err(|e| refuse_with(&e))?,
        ),
        "--tmpfs" => parsed.mounts.push(
            parse_tmpfs_flag(&value()?, &format!("runArgs {flag}")).map_err(|e| refuse_with(&e))?,
        ),
        _ => return Err(refuse(flag, "is not in the supported subset of runArgs")),
    }
    Ok(())
}

fn refuse(flag: &str, why: &str) -> Error {
    Error::new(ErrorCode::Devcontainer, format!("runArgs '{flag}' {why}"))
}

fn refuse_with(why: &str) -> Error {
    Error::new(ErrorCode::Devcontainer, why.to_string())
}

fn non_empty(value: String, flag: &str) -> Result<String> {
    if value.is_empty() {
        return Err(refuse(flag, "needs a value"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devcontainer::MountKind;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn parse(list: &[&str]) -> Result<RunArgs> {
        let host = HostEnv::only(
            [
                ("FROM_HOST".to_string(), "h".to_string()),
                ("SECRET".to_string(), "s".to_string()),
            ]
            .into(),
            &["FROM_HOST".to_string(), "NOT_ON_HOST".to_string()],
        );
        parse_run_args(&args(list), &host)
    }

    #[test]
    fn parses_what_shapes_the_container() {
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
            "-e",
            "SECRET",
            "--label",
            "flag",
            "--memory=1.5g",
            "--net",
            "my-net_1",
            "--platform",
            "linux/arm64",
            "-h",
            "box",
            "--workdir=/w",
        ])
        .unwrap();
        assert_eq!(parsed.env["A"], "1");
        assert_eq!(parsed.env["B"], "2");
        assert_eq!(parsed.env["FROM_HOST"], "h");
        assert!(!parsed.env.contains_key("NOT_ON_HOST"));
        assert!(!parsed.env.contains_key("SECRET"));
        assert_eq!(parsed.labels["flag"], "");
        assert_eq!(parsed.memory, Some(3 << 29));
        assert_eq!(parsed.network.as_deref(), Some("my-net_1"));
        assert_eq!(parsed.user.as_deref(), Some("agent"));
        assert_eq!(parsed.platform.as_deref(), Some("linux/arm64"));
        assert_eq!(parsed.hostname.as_deref(), Some("box"));
        assert_eq!(parsed.workdir.as_deref(), Some("/w"));
        assert_eq!(
            parse(&["--platform=linux/amd64"])
                .unwrap()
                .platform
                .as_deref(),
            Some("linux/amd64")
        );
        assert!(!parsed.privileges.privileged);
    }

    #[test]
    fn parses_what_reaches_the_host_for_the_trust_check() {
        let parsed = parse(&[
            "--privileged",
            "--cap-add=SYS_PTRACE",
            "--cap-drop",
            "NET_RAW",
            "--security-opt",
            "seccomp=unconfined",
            "--device=/dev/kvm",
            "--pid=host",
            "--network",
            "host",
            "-v",
            "/etc:/hostetc:ro",
            "--mount",
            "type=volume,source=cache,target=/cache",
            "--tmpfs",
            "/scratch",
        ])
        .unwrap();
        let p = &parsed.privileges;
        assert!(p.privileged);
        assert_eq!(p.cap_add, ["SYS_PTRACE"]);
        assert_eq!(p.cap_drop, ["NET_RAW"]);
        assert_eq!(p.security_opt, ["seccomp=unconfined"]);
        assert_eq!(p.devices, ["/dev/kvm"]);
        assert_eq!(p.namespaces["pid"], "host");
        assert_eq!(parsed.network.as_deref(), Some("host"));
        let kinds: Vec<_> = parsed.mounts.iter().map(|m| m.kind).collect();
        assert_eq!(
            kinds,
            [MountKind::Bind, MountKind::Volume, MountKind::Tmpfs]
        );
        assert!(parsed.mounts[0].readonly);
    }

    #[test]
    fn refuses_what_it_does_not_understand() {
        for bad in [
            &["--env-file", "/etc/shadow"][..],
            &["--memory", "lots"],
            &["-e"],
            &["--cap-add="],
            &["-v", "./rel:/x"],
            &["--rm"],
            &["--platform"],
            &["--platform="],
        ] {
            let err = parse(bad).unwrap_err();
            assert_eq!(err.code, ErrorCode::Devcontainer, "{bad:?}");
        }
    }
}
