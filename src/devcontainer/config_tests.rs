//! Reading devcontainer.json: the file's own rules (JSONC, size, types, variables).

use super::*;
use crate::devcontainer::MountKind;

struct Project(PathBuf);

impl Project {
    fn with(files: &[(&str, &str)]) -> Self {
        let dir = std::env::temp_dir().join(format!("ci-dc-{}", uuid::Uuid::new_v4()));
        for (name, text) in files {
            let file = dir.join(name);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        Project(dir)
    }

    fn read(&self) -> Result<Option<DevcontainerConfig>> {
        read_devcontainer_config(&self.0)
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let project = Project::with(&[(".devcontainer.json", "\u{feff}{ \"name\": \"bom\" }")]);
    assert_eq!(
        project.read().unwrap().unwrap().name.as_deref(),
        Some("bom")
    );
}

#[test]
fn a_syntax_error_names_file_line_and_column_once() {
    let project = Project::with(&[(".devcontainer.json", "{\n  // c\n  \"a\": [1,,]\n}")]);
    let err = project.read().unwrap_err();
    assert_eq!(err.code, ErrorCode::Devcontainer);
    let file = project.0.join(".devcontainer.json");
    assert_eq!(
        err.message,
        format!("{}: line 3 column 11: expected value", file.display())
    );
}

#[test]
fn the_older_top_level_dockerfile_and_context_still_build() {
    let project = Project::with(&[
        (
            ".devcontainer/devcontainer.json",
            r#"{ "dockerFile": "Dockerfile", "context": ".." }"#,
        ),
        (".devcontainer/Dockerfile", "FROM scratch\n"),
    ]);
    let build = project.read().unwrap().unwrap().build.unwrap();
    assert_eq!(build.dockerfile, project.0.join(".devcontainer/Dockerfile"));
    assert_eq!(build.context, project.0);
}

#[test]
fn mounts_of_every_kind_and_what_reaches_the_host_are_read_not_judged() {
    let project = Project::with(&[(
        ".devcontainer.json",
        r#"{ "mounts": ["type=tmpfs,target=/scratch", "source=/a,target=/b,type=bind", "source=hist,target=/h"],
             "capAdd": ["SYS_PTRACE"], "securityOpt": ["seccomp=unconfined"], "features": {}, "forwardPorts": [3000] }"#,
    )]);
    let config = project.read().unwrap().unwrap();
    let kinds: Vec<_> = config.mounts.iter().map(|m| m.kind).collect();
    assert_eq!(
        kinds,
        [MountKind::Tmpfs, MountKind::Bind, MountKind::Volume]
    );
    assert_eq!(config.cap_add, ["SYS_PTRACE"]);
    assert_eq!(config.security_opt, ["seccomp=unconfined"]);
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
    assert_eq!(config.ports[0].container_port, 3000);
}

#[test]
fn a_session_read_sees_its_clone_and_only_the_allowed_host_environment() {
    let project = Project::with(&[(
        ".devcontainer.json",
        r#"{ "workspaceFolder": "/w/${localWorkspaceFolderBasename}",
             "mounts": ["type=bind,source=${localWorkspaceFolder}/cache,target=/cache"],
             "containerEnv": { "A": "${localEnv:CI_TEST_ALLOWED}", "B": "${localEnv:CI_TEST_DENIED:d}" } }"#,
    )]);
    let vars = [
        ("CI_TEST_ALLOWED".to_string(), "yes".to_string()),
        ("CI_TEST_DENIED".to_string(), "secret".to_string()),
    ];
    let options = ReadOptions {
        local_folder: Some(PathBuf::from("/base/sessions/session-s")),
        host_env: HostEnv::only(vars.into(), &["CI_TEST_ALLOWED".to_string()]),
    };
    let config = read_devcontainer_config_with(&project.0, options)
        .unwrap()
        .unwrap();
    let basename = project.0.file_name().unwrap().to_str().unwrap();
    assert_eq!(config.workspace_folder, format!("/w/{basename}"));
    assert_eq!(config.mounts[0].source, "/base/sessions/session-s/cache");
    assert_eq!(config.container_env["A"], "yes");
    assert_eq!(config.container_env["B"], "d");
    assert_eq!(config.denied_env, ["CI_TEST_DENIED"]);
}

#[test]
fn an_oversized_file_is_refused_unread() {
    let big = format!("{{ \"name\": \"{}\" }}", "x".repeat(CONFIG_LIMIT as usize));
    let project = Project::with(&[(".devcontainer.json", &big)]);
    let err = project.read().unwrap_err();
    assert_eq!(err.code, ErrorCode::Devcontainer);
    assert!(err.message.contains("larger than"));
}

#[test]
fn wrong_types_are_refused() {
    for text in [
        r#"{ "privileged": "yes" }"#,
        r#"{ "build": { "context": ".." } }"#,
        r#"{ "mounts": [{ "source": "/a", "target": "/b", "readonly": "yes" }] }"#,
        r#"{ "workspaceMount": "source=/a,target=/b" }"#,
        r#"{ "workspaceFolder": "relative" }"#,
        r#"[]"#,
    ] {
        let project = Project::with(&[(".devcontainer.json", text)]);
        let err = project.read().unwrap_err();
        assert_eq!(err.code, ErrorCode::Devcontainer, "{text}");
    }
}

#[test]
fn variables_see_the_absolute_project_path() {
    let project = Project::with(&[(
        ".devcontainer.json",
        r#"{ "name": "${localWorkspaceFolderBasename}", "workspaceFolder": "/w/${localWorkspaceFolderBasename}", "remoteEnv": { "ID": "${devcontainerId}", "D": "${containerWorkspaceFolderBasename}" } }"#,
    )]);
    let config = project.read().unwrap().unwrap();
    let basename = project.0.file_name().unwrap().to_str().unwrap();
    assert_eq!(config.name.as_deref(), Some(basename));
    assert_eq!(config.workspace_folder, format!("/w/{basename}"));
    assert_eq!(config.remote_env["ID"], Some(devcontainer_id(&project.0)));
    assert_eq!(config.remote_env["D"].as_deref(), Some(basename));
}

#[test]
fn a_missing_project_is_enoent_and_one_without_config_is_none() {
    let project = Project::with(&[("README", "")]);
    assert!(project.read().unwrap().is_none());
    let err = read_devcontainer_config(&project.0.join("nope")).unwrap_err();
    assert_eq!(err.code, ErrorCode::Enoent);
    let err = read_devcontainer_config(&project.0.join("README")).unwrap_err();
    assert_eq!(err.code, ErrorCode::Enotdir);
}
