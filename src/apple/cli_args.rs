//! argv for Apple's `container` CLI, built as data (never a shell string): create with
//! `--mount type=bind,…[,readonly]` (single-file `-v` mounts are flaky there), labels,
//! environment, resources; stop with a grace time; exec with the process flags.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::container_runtime::ContainerConfig;
use crate::runtime::{ContainerMount, PortMapping, DEFAULT_HOST_IP};

pub const PROGRAM: &str = "container";

pub fn mount_arg(mount: &ContainerMount) -> String {
    let mut arg = format!("type=bind,source={},target={}", mount.source, mount.target);
    if mount.readonly {
        arg.push_str(",readonly");
    }
    arg
}

/// `container create …` for `config`, named `name`, from `image`, with `labels`, running
/// `process` (the job's command, or our keep-alive).
pub fn create_args(
    config: &ContainerConfig,
    name: &str,
    image: &str,
    labels: &BTreeMap<String, String>,
    process: &[String],
) -> Vec<String> {
    let mut args = vec!["create".to_string(), "--name".into(), name.into()];
    args.extend(["--workdir".into(), config.working_directory.clone()]);
    for mount in &config.mounts {
        args.extend(["--mount".into(), mount_arg(mount)]);
    }
    for (key, value) in &config.environment {
        args.extend(["--env".into(), format!("{key}={value}")]);
    }
    for (key, value) in labels {
        args.extend(["--label".into(), format!("{key}={value}")]);
    }
    if let Some(memory) = config.memory {
        // The CLI allocates memory with 1 MiB granularity.
        args.extend([
            "--memory".into(),
            format!("{}M", (memory + (1 << 20) - 1) >> 20),
        ]);
    }
    if let Some(user) = &config.user {
        args.extend(["--user".into(), user.clone()]);
    }
    if let Some(network) = &config.network {
        args.extend(["--network".into(), network.clone()]);
    }
    for port in &config.ports {
        args.extend(["--publish".into(), publish_arg(port)]);
    }
    for cap in &config.privileges.cap_add {
        args.extend(["--cap-add".into(), cap.clone()]);
    }
    if let Some((entrypoint, rest)) = process.split_first() {
        args.extend(["--entrypoint".into(), entrypoint.clone(), image.to_string()]);
        args.extend(rest.iter().cloned());
    } else {
        args.push(image.to_string());
    }
    args
}

/// `[host-ip:]host-port:container-port[/protocol]`, loopback unless the mapping says.
fn publish_arg(port: &PortMapping) -> String {
    format!(
        "{}:{}:{}/{}",
        port.host_ip.as_deref().unwrap_or(DEFAULT_HOST_IP),
        port.host,
        port.container,
        port.protocol.as_deref().unwrap_or("tcp")
    )
}

pub fn stop_args(id: &str, grace: Duration) -> Vec<String> {
    let seconds = grace.as_millis().div_ceil(1000).max(1);
    vec![
        "stop".into(),
        "--time".into(),
        seconds.to_string(),
        id.into(),
    ]
}

pub fn exec_args(
    id: &str,
    command: &[String],
    working_dir: Option<&str>,
    env: &BTreeMap<String, String>,
    user: Option<&str>,
    interactive: bool,
) -> Vec<String> {
    let mut args = vec!["exec".to_string()];
    if interactive {
        args.push("--interactive".into());
    }
    if let Some(dir) = working_dir {
        args.extend(["--workdir".into(), dir.into()]);
    }
    for (key, value) in env {
        args.extend(["--env".into(), format!("{key}={value}")]);
    }
    if let Some(user) = user {
        args.extend(["--user".into(), user.into()]);
    }
    args.push(id.into());
    args.extend(command.iter().cloned());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_uses_mount_syntax_entrypoint_and_labels() {
        let config = ContainerConfig {
            working_directory: "/workspace".into(),
            mounts: vec![
                ContainerMount::bind("/Users/me/p", "/workspace", false),
                ContainerMount::bind("/Users/me/cache", "/cache", true),
            ],
            environment: [("A".to_string(), "1 2".to_string())].into(),
            memory: Some(3 * (1 << 20) + 1),
            ..Default::default()
        };
        let labels = [("k".to_string(), "v".to_string())].into();
        let args = create_args(
            &config,
            "n1",
            "img:1",
            &labels,
            &["/bin/sh".into(), "-c".into(), "x; y".into()],
        );
        assert_eq!(
            args,
            [
                "create",
                "--name",
                "n1",
                "--workdir",
                "/workspace",
                "--mount",
                "type=bind,source=/Users/me/p,target=/workspace",
                "--mount",
                "type=bind,source=/Users/me/cache,target=/cache,readonly",
                "--env",
                "A=1 2",
                "--label",
                "k=v",
                "--memory",
                "4M",
                "--entrypoint",
                "/bin/sh",
                "img:1",
                "-c",
                "x; y",
            ]
        );
    }

    #[test]
    fn stop_rounds_up_to_seconds_and_exec_passes_argv_as_data() {
        assert_eq!(
            stop_args("c", Duration::from_millis(1500)),
            ["stop", "--time", "2", "c"]
        );
        let env = [("E".to_string(), "$(x)".to_string())].into();
        assert_eq!(
            exec_args(
                "c",
                &["echo".into(), "$HOME".into()],
                Some("/w"),
                &env,
                Some("agent"),
                false
            ),
            [
                "exec",
                "--workdir",
                "/w",
                "--env",
                "E=$(x)",
                "--user",
                "agent",
                "c",
                "echo",
                "$HOME"
            ]
        );
    }
}
