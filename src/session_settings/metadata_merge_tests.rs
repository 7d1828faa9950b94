//! Image metadata merged under the host's trust: order, last-wins fields, refusals.

use std::path::{Path, PathBuf};

use super::*;
use crate::devcontainer::parse_image_metadata;
use crate::error::ErrorCode;
use crate::session_settings::Trust;

fn merged(
    label: &str,
    trust: &Trust,
    own: impl FnOnce(&mut SessionSettings),
) -> Result<SessionSettings> {
    let clone = std::env::temp_dir().join(format!("ci-mm-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&clone).unwrap();
    let env = BTreeMap::new();
    let sockets: [PathBuf; 0] = [];
    let request = SettingsRequest {
        project: Path::new("/nonexistent"),
        clone: &clone,
        image: None,
        default_image: Some("img"),
        env: &env,
        network: None,
        trust,
        engine_sockets: &sockets,
        session_id: "s",
        mount_path: "/workspace",
    };
    let mut settings = SessionSettings::plain(&clone, "img".into(), "/workspace");
    own(&mut settings);
    let entries = parse_image_metadata("img", label)?;
    let out = merge_image_metadata(&request, &mut settings, "img", &entries).map(|_| settings);
    let _ = std::fs::remove_dir_all(&clone);
    out
}

#[test]
fn the_image_comes_first_and_the_config_last() {
    let label = r#"[
        {"remoteUser": "a", "containerEnv": {"X": "image", "Y": "image"}, "postCreateCommand": "one",
         "remoteEnv": {"R": "image", "U": "u"}, "userEnvProbe": "none", "init": true},
        {"remoteUser": "b", "postCreateCommand": "two", "mounts": ["type=volume,source=v,target=/v"],
         "overrideCommand": false, "entrypoint": "/e.sh"}
    ]"#;
    let settings = merged(label, &Trust::default(), |s| {
        s.env.insert("Y".into(), "config".into());
        s.remote_env.insert("U".into(), None);
        s.behaviour.user_env_probe = Some("loginShell".into());
        s.lifecycle.post_create = Some(LifecycleCommand::Single(
            crate::devcontainer::Command::Shell("three".into()),
        ));
    })
    .unwrap();
    assert_eq!(settings.remote_user.as_deref(), Some("b"));
    assert_eq!(settings.env["X"], "image");
    assert_eq!(settings.env["Y"], "config");
    assert_eq!(settings.remote_env["R"].as_deref(), Some("image"));
    assert_eq!(settings.remote_env["U"], None);
    assert_eq!(settings.behaviour.user_env_probe(), "loginShell");
    assert!(!settings.behaviour.override_command());
    assert!(settings.behaviour.init());
    assert_eq!(settings.behaviour.entrypoints, ["/e.sh"]);
    let runs: Vec<String> = settings
        .commands_of("postCreateCommand")
        .iter()
        .map(|c| c.commands()[0].1.argv()[2].clone())
        .collect();
    assert_eq!(runs, ["one", "two", "three"]);
    assert_eq!(settings.mounts.len(), 2);
    assert_eq!(settings.mounts[1].mount.target, "/v");
}

#[test]
fn a_command_the_config_repeats_runs_once_and_the_config_user_wins() {
    let label = r#"[{"remoteUser": "a", "postStartCommand": "same"}]"#;
    let settings = merged(label, &Trust::default(), |s| {
        s.remote_user = Some("me".into());
        s.lifecycle.post_start = Some(LifecycleCommand::Single(
            crate::devcontainer::Command::Shell("same".into()),
        ));
    })
    .unwrap();
    assert_eq!(settings.remote_user.as_deref(), Some("me"));
    assert_eq!(settings.commands_of("postStartCommand").len(), 1);
}

#[test]
fn what_reaches_the_host_is_refused_as_image_metadata_unless_trusted() {
    let label = r#"[{"privileged": true, "capAdd": ["SYS_ADMIN"], "securityOpt": ["seccomp=unconfined"],
                     "mounts": ["type=bind,source=/etc,target=/hostetc"]}]"#;
    let err = merged(label, &Trust::default(), |_| {}).unwrap_err();
    assert_eq!(err.code, ErrorCode::Devcontainer);
    for part in [
        "image img (label devcontainer.metadata)",
        "image metadata[0].privileged: privileged mode; allow with trust.privileged: true",
        "image metadata[0].capAdd",
        "capabilities: [\"SYS_ADMIN\"]",
        "image metadata[0].securityOpt",
        "image metadata[0].mounts[0]",
    ] {
        assert!(err.message.contains(part), "{part} in {}", err.message);
    }
    let trust = Trust {
        privileged: true,
        capabilities: vec!["SYS_ADMIN".into()],
        security_options: true,
        host_paths: vec![PathBuf::from("/etc")],
        ..Default::default()
    };
    let settings = merged(label, &trust, |s| {
        s.privileges.cap_add.push("SYS_ADMIN".into())
    })
    .unwrap();
    assert!(settings.privileges.privileged);
    assert_eq!(settings.privileges.cap_add, ["SYS_ADMIN"]);
    assert_eq!(settings.mounts[1].mount.target, "/hostetc");
}
