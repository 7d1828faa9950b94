//! Settings resolution under the host's trust: refusals, grants, symlinks, builds.

use super::*;
use crate::devcontainer::{read_devcontainer_config_with, HostEnv, ReadOptions};
use crate::session_settings::MountOrigin;

struct Dirs {
    root: PathBuf,
    project: PathBuf,
    clone: PathBuf,
}

impl Dirs {
    fn new(config: &str) -> Dirs {
        let root = std::env::temp_dir().join(format!("ci-sr-{}", uuid::Uuid::new_v4()));
        let project = root.join("project");
        let clone = root.join("sessions/session-s");
        std::fs::create_dir_all(project.join(".devcontainer")).unwrap();
        std::fs::create_dir_all(&clone).unwrap();
        std::fs::write(project.join(".devcontainer/devcontainer.json"), config).unwrap();
        Dirs {
            root,
            project,
            clone,
        }
    }

    fn resolve(&self, trust: &Trust) -> Result<SessionSettings> {
        let vars = [("SECRET".to_string(), "s".to_string())].into();
        let config = read_devcontainer_config_with(
            &self.project,
            ReadOptions {
                local_folder: Some(self.clone.clone()),
                host_env: HostEnv::only(vars, &trust.local_env),
            },
        )?
        .unwrap();
        let env = BTreeMap::new();
        let sockets = [PathBuf::from("/etc/hostname")];
        let request = SettingsRequest {
            project: &self.project,
            clone: &self.clone,
            image: None,
            default_image: Some("img"),
            env: &env,
            network: None,
            trust,
            engine_sockets: &sockets,
            session_id: "s",
            mount_path: "/workspace",
        };
        resolve_settings(&request, &config)
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

const HOSTILE: &str = r#"{
    "image": "img",
    "mounts": ["type=bind,source=/etc,target=/hostetc", "source=${localWorkspaceFolder}/cache,target=/cache,type=bind",
               "source=hist,target=/hist", "type=tmpfs,target=/t", { "type": "bind", "source": "/etc/hostname", "target": "/sock" }],
    "privileged": true, "capAdd": ["SYS_PTRACE"], "securityOpt": ["seccomp=unconfined"],
    "runArgs": ["--device=/dev/null", "--pid=host", "--network=host"],
    "initializeCommand": "true",
    "containerEnv": { "S": "${localEnv:SECRET}" }
}"#;

#[test]
fn everything_that_reaches_the_host_is_refused_at_once_naming_the_option() {
    let dirs = Dirs::new(HOSTILE);
    let err = dirs.resolve(&Trust::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::Devcontainer);
    for allow in [
        "mounts[0]: bind mount of host path /etc (outside the session clone); allow with trust.hostPaths: [\"/etc\"]",
        "mounts[4]: /etc/hostname gives the container the engine's socket; allow with trust.engineSocket: true",
        "privileged: privileged mode; allow with trust.privileged: true",
        "capAdd: capabilities SYS_PTRACE; allow with trust.capabilities: [\"SYS_PTRACE\"]",
        "securityOpt: security options seccomp=unconfined; allow with trust.securityOptions: true",
        "runArgs: host devices /dev/null; allow with trust.devices: true",
        "trust.hostNamespaces: true",
        "initializeCommand: runs a command on the host; allow with trust.hostCommands: true",
        "reads the host's environment variables SECRET; allow with trust.localEnv: [\"SECRET\"]",
    ] {
        assert!(err.message.contains(allow), "{allow}\n{}", err.message);
    }
    assert!(err.message.contains("network=host") && err.message.contains("pid=host"));
    assert!(!err.message.contains("mounts[1]"), "{}", err.message);
}

#[test]
fn what_the_host_trusts_is_granted() {
    let dirs = Dirs::new(HOSTILE);
    let trust = Trust {
        host_paths: vec!["/etc".into()],
        privileged: true,
        capabilities: vec!["SYS_PTRACE".into()],
        security_options: true,
        devices: true,
        host_namespaces: true,
        engine_socket: true,
        host_commands: true,
        local_env: vec!["SECRET".into()],
        feature_registries: Vec::new(),
    };
    let settings = dirs.resolve(&trust).unwrap();
    let origins: Vec<_> = settings.mounts.iter().map(|m| m.origin.clone()).collect();
    assert_eq!(
        origins[0],
        MountOrigin::Clone {
            relative: PathBuf::new()
        }
    );
    assert_eq!(origins[1], MountOrigin::Host);
    assert_eq!(
        origins[2],
        MountOrigin::Clone {
            relative: "cache".into()
        }
    );
    assert!(dirs.clone.join("cache").is_dir());
    assert_eq!(settings.mounts[1].mount.source, "/etc");
    assert_eq!(settings.env["S"], "s");
    assert!(settings.privileges.privileged && settings.lifecycle.initialize.is_some());
    assert_eq!(settings.network.as_deref(), Some("host"));
}

#[test]
fn a_symlink_in_the_clone_and_a_missing_host_path_are_refused_and_nothing_is_made() {
    let dirs = Dirs::new(
        r#"{ "image": "img", "mounts": ["type=bind,source=${localWorkspaceFolder}/link/sub,target=/x"] }"#,
    );
    std::os::unix::fs::symlink("/tmp", dirs.clone.join("link")).unwrap();
    let err = dirs.resolve(&Trust::default()).unwrap_err();
    assert!(err.message.contains("symlink"), "{}", err.message);
    assert!(!Path::new("/tmp/sub").exists());

    let missing = dirs.root.join("not-there");
    let config = format!(
        r#"{{ "image": "img", "mounts": ["type=bind,source={},target=/x"] }}"#,
        missing.display()
    );
    let dirs2 = Dirs::new(&config);
    let trust = Trust {
        host_paths: vec![dirs.root.clone()],
        ..Default::default()
    };
    let err = dirs2.resolve(&trust).unwrap_err();
    assert!(err.message.contains("never created"), "{}", err.message);
    assert!(!missing.exists());
}

#[test]
fn a_build_must_stay_in_the_project() {
    let dirs = Dirs::new(r#"{ "build": { "dockerfile": "Dockerfile" } }"#);
    std::os::unix::fs::symlink("/etc/passwd", dirs.project.join(".devcontainer/Dockerfile"))
        .unwrap();
    let err = dirs.resolve(&Trust::default()).unwrap_err();
    assert!(
        err.message
            .contains("build.dockerfile: /etc/passwd is outside the project"),
        "{}",
        err.message
    );
    assert!(!err.message.contains("root:"));
    let dirs = Dirs::new(r#"{ "build": { "dockerfile": "Dockerfile", "context": "../.." } }"#);
    std::fs::write(dirs.project.join(".devcontainer/Dockerfile"), "FROM x\n").unwrap();
    let err = dirs.resolve(&Trust::default()).unwrap_err();
    assert!(err.message.contains("build.context"), "{}", err.message);
    std::fs::remove_file(dirs.project.join(".devcontainer/devcontainer.json")).unwrap();
    std::fs::write(
        dirs.project.join(".devcontainer/devcontainer.json"),
        r#"{ "build": { "dockerfile": "Dockerfile" } }"#,
    )
    .unwrap();
    let settings = dirs.resolve(&Trust::default()).unwrap();
    match settings.image {
        ImageChoice::Built { build, .. } => {
            assert_eq!(
                build.context,
                dirs.project.join(".devcontainer").canonicalize().unwrap()
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_compose_config_is_refused_whatever_the_trust() {
    let dirs =
        Dirs::new(r#"{ "dockerComposeFile": "compose.yml", "service": "app", "image": "img" }"#);
    let trust = Trust {
        host_commands: true,
        ..Trust::default()
    };
    let err = dirs.resolve(&trust).unwrap_err();
    assert_eq!(err.code, ErrorCode::Devcontainer);
    assert!(
        err.message.contains("Docker Compose configs are not run"),
        "{}",
        err.message
    );
}

#[test]
fn platform_hostname_and_workdir_reach_the_container_config() {
    let dirs = Dirs::new(
        r#"{ "image": "img", "runArgs": ["--platform=linux/amd64", "--hostname", "box", "-w", "/tmp"] }"#,
    );
    let config = dirs.resolve(&Trust::default()).unwrap().container_config();
    assert_eq!(config.platform.as_deref(), Some("linux/amd64"));
    assert_eq!(config.hostname.as_deref(), Some("box"));
    assert_eq!(config.working_directory, "/tmp");
}

#[test]
fn oci_features_need_a_trusted_registry_and_local_ones_stay_in_the_project() {
    let dirs = Dirs::new(
        r#"{ "image": "img", "features": { "r.example:5000/ns/tool:1": {}, "./features/x": { "v": "1" } } }"#,
    );
    std::fs::create_dir_all(dirs.project.join(".devcontainer/features/x")).unwrap();
    let err = dirs.resolve(&Trust::default()).unwrap_err();
    assert!(
        err.message.contains(
            "features.r.example:5000/ns/tool:1: the host would fetch it from the registry r.example:5000; allow with trust.featureRegistries: [\"r.example:5000\"]"
        ),
        "{}",
        err.message
    );
    let trust = Trust {
        feature_registries: vec!["r.example:5000".into()],
        ..Default::default()
    };
    let settings = dirs.resolve(&trust).unwrap();
    assert_eq!(settings.feature_registries, ["r.example:5000"]);
    let local = &settings.features[0];
    assert_eq!(
        local.source,
        FeatureSource::Local {
            path: std::fs::canonicalize(dirs.project.join(".devcontainer/features/x")).unwrap()
        }
    );
}
