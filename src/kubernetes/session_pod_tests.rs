//! The Pod a config becomes: its boundary settings, and what is refused by name.

use super::*;
use crate::runtime::{ContainerMount, ResourceLimits};

fn placement() -> PodPlacement<'static> {
    PodPlacement {
        namespace: "ns",
        runtime_class: Some("gvisor"),
        owner: None,
        pull: PullPolicy::Never,
    }
}

fn config() -> ContainerConfig {
    ContainerConfig {
        working_directory: "/workspace".into(),
        ..Default::default()
    }
}

fn pod(config: &ContainerConfig) -> Result<Pod> {
    let labels = BTreeMap::from([
        (
            "dev.container-isolation.managed".to_string(),
            "true".to_string(),
        ),
        (
            "dev.container-isolation.base-dir".to_string(),
            "/var/x".to_string(),
        ),
    ]);
    session_pod(config, "ci-1234abcd", "img:1", &labels, &placement())
}

#[test]
fn a_sandbox_pod_holds_the_boundary() {
    let pod = pod(&config()).unwrap();
    let spec = pod.spec.unwrap();
    assert_eq!(spec.automount_service_account_token, Some(false));
    assert_eq!(spec.enable_service_links, Some(false));
    assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
    assert_eq!(spec.runtime_class_name.as_deref(), Some("gvisor"));
    assert!(spec.host_network.is_none() && spec.host_pid.is_none() && spec.host_ipc.is_none());
    let seccomp = spec.security_context.unwrap().seccomp_profile.unwrap();
    assert_eq!(seccomp.type_, "RuntimeDefault");
    let c = &spec.containers[0];
    assert_eq!(c.name, CONTAINER);
    assert_eq!(c.image_pull_policy.as_deref(), Some("Never"));
    assert_eq!(c.command.as_ref().unwrap()[0], "/bin/sh");
    let sc = c.security_context.as_ref().unwrap();
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    let caps = sc.capabilities.as_ref().unwrap();
    assert_eq!(caps.drop.as_deref(), Some(&["ALL".to_string()][..]));
    assert!(!caps
        .add
        .as_ref()
        .unwrap()
        .iter()
        .any(|c| c == "NET_RAW" || c == "SYS_ADMIN"));
    let meta = pod.metadata;
    assert_eq!(meta.labels.unwrap().len(), 1, "a path is no label value");
    assert_eq!(meta.annotations.unwrap().len(), 2);
}

#[test]
fn limits_user_and_network_none() {
    let mut c = config();
    c.resources = ResourceLimits {
        memory: Some(64 << 20),
        nano_cpus: Some(500_000_000),
        ..Default::default()
    };
    c.user = Some("1000:1000".into());
    c.network = Some("none".into());
    let pod = pod(&c).unwrap();
    assert_eq!(
        pod.metadata
            .labels
            .unwrap()
            .get(NETWORK_LABEL)
            .map(String::as_str),
        Some("none")
    );
    let container = &pod.spec.unwrap().containers[0];
    let limits = container
        .resources
        .as_ref()
        .unwrap()
        .limits
        .as_ref()
        .unwrap();
    assert_eq!(limits["memory"].0, (64 << 20).to_string());
    assert_eq!(limits["cpu"].0, "500m");
    let sc = container.security_context.as_ref().unwrap();
    assert_eq!((sc.run_as_user, sc.run_as_group), (Some(1000), Some(1000)));
}

#[test]
fn what_a_pod_cannot_do_is_refused_by_name() {
    type Change = Box<dyn Fn(&mut ContainerConfig)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "bind",
            Box::new(|c| {
                c.mounts
                    .push(ContainerMount::new(MountKind::Bind, "/tmp", "/workspace"))
            }),
        ),
        ("resources.pids", Box::new(|c| c.resources.pids = Some(64))),
        (
            "resources.nofile",
            Box::new(|c| c.resources.nofile = Some(64)),
        ),
        (
            "network 'bridge'",
            Box::new(|c| c.network = Some("bridge".into())),
        ),
        ("privileged", Box::new(|c| c.privileges.privileged = true)),
        ("user 'dev'", Box::new(|c| c.user = Some("dev".into()))),
    ];
    for (name, change) in cases {
        let mut c = config();
        change(&mut c);
        let err = pod(&c).unwrap_err();
        assert_eq!(err.code, ErrorCode::Unsupported, "{name}: {}", err.message);
        assert!(err.message.contains(name), "{name}: {}", err.message);
    }
}

#[test]
fn a_name_kubernetes_refuses_is_invalid_argument() {
    let labels = BTreeMap::new();
    for name in ["Upper-1", "under_score", "-dash"] {
        let err = session_pod(&config(), name, "img", &labels, &placement()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument, "{name}");
    }
}

#[test]
fn a_job_runs_its_command_and_tmpfs_is_memory() {
    let mut c = config();
    c.command = Some(vec!["echo".into(), "hi".into()]);
    let mut tmpfs = ContainerMount::new(MountKind::Tmpfs, "", "/scratch");
    tmpfs.tmpfs_size = Some(1 << 20);
    c.mounts.push(tmpfs);
    let spec = pod(&c).unwrap().spec.unwrap();
    assert_eq!(
        spec.containers[0].command.as_deref(),
        Some(&["echo".to_string(), "hi".to_string()][..])
    );
    let volumes = spec.volumes.unwrap();
    let volume = volumes.iter().find(|v| v.name == "tmpfs-0").unwrap();
    let empty_dir = volume.empty_dir.as_ref().unwrap();
    assert_eq!(empty_dir.medium.as_deref(), Some("Memory"));
    assert_eq!(
        empty_dir.size_limit.as_ref().unwrap().0,
        (1 << 20).to_string()
    );
}
