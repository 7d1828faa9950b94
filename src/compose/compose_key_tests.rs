//! The compose files' keys one by one (each mapped key reaches the plan, each ignored one
//! is warned about by name) and the bounds of the reading against hostile files.

use super::tests::{message, Project};
use super::*;
use crate::scratch_dir::Scratch;

#[test]
fn ignored_keys_are_warned_about_by_name() {
    let p = Project::new();
    p.write(
        ".devcontainer/compose.yml",
        "services:\n  app:\n    image: a\n    restart: unless-stopped\n    networks: [back]\n    extra_hosts: ['h:1.2.3.4']\n    sysctls: {net.core.somaxconn: 1024}\n    network_mode: bridge\n    imagee: typo\n    x-mine: 1\nnetworks: {back: {driver: bridge}}\n",
    );
    let plan = p.read(&["compose.yml"], "app").unwrap();
    for key in [
        "restart",
        "networks",
        "extra_hosts",
        "sysctls",
        "network_mode 'bridge'",
        "imagee",
    ] {
        assert!(
            plan.warnings
                .iter()
                .any(|w| w.contains(&format!("services.app.{key}"))),
            "{key}: {:?}",
            plan.warnings
        );
    }
    assert!(!plan.warnings.iter().any(|w| w.contains("x-mine")));
}

#[test]
fn compose_files_are_read_as_devcontainer_json_is() {
    let p = Project::new();
    let outside = Scratch::new("compose-outside");
    std::fs::write(outside.path("c.yml"), "services: {app: {image: a}}\n").unwrap();
    std::os::unix::fs::symlink(outside.path("c.yml"), p.dir.path(".devcontainer/out.yml")).unwrap();
    assert!(message(p.read(&["out.yml"], "app")).contains("outside the project"));
    p.write(".devcontainer/real.yml", "services: {app: {image: a}}\n");
    std::os::unix::fs::symlink("real.yml", p.dir.path(".devcontainer/in.yml")).unwrap();
    assert_eq!(p.read(&["in.yml"], "app").unwrap().services[0].name, "app");
    p.write(
        ".devcontainer/big.yml",
        &format!(
            "services: {{app: {{image: a}}}}\n#{}\n",
            "x".repeat(1 << 20)
        ),
    );
    assert!(message(p.read(&["big.yml"], "app")).contains("larger than"));
    let fifo = std::ffi::CString::new(
        p.dir
            .path(".devcontainer/fifo.yml")
            .to_string_lossy()
            .as_bytes(),
    )
    .unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    assert!(message(p.read(&["fifo.yml"], "app")).contains("not a regular file"));
    std::fs::create_dir(p.dir.path(".devcontainer/dir.yml")).unwrap();
    assert!(message(p.read(&["dir.yml"], "app")).contains("not a regular file"));
    assert!(message(p.read(&["missing.yml"], "app")).contains("no such file"));
}

#[test]
fn every_mapped_key_reaches_the_plan() {
    let p = Project::new();
    p.write(".devcontainer/app.env", "FROM_FILE=1\nBOTH=file\n")
        .write(
            ".devcontainer/compose.yml",
            "services:\n  app:\n    image: a\n    entrypoint: /bin/sh -c\n    command: [\"echo $$HOME\"]\n    user: '1000:1000'\n    working_dir: /work\n    init: true\n    read_only: true\n    platform: linux/amd64\n    tmpfs: /run\n    labels: [team=core, empty=]\n    environment: {BOTH: env, NUMBER: 5432, FLAG: true}\n    env_file: [app.env, {path: missing.env, required: false}]\n    ports: ['127.0.0.1:8080:80', '9000-9001:9000-9001/udp']\n    expose: ['7000']\n    cap_drop: [NET_RAW]\n    healthcheck: {disable: true}\n    volumes: [{type: tmpfs, target: /cache}, {type: volume, target: /anon}]\n",
        );
    let plan = p.read(&["compose.yml"], "app").unwrap();
    let app = &plan.services[0];
    assert_eq!(app.entrypoint.as_deref().unwrap(), ["/bin/sh", "-c"]);
    assert_eq!(app.command.as_deref().unwrap(), ["echo $HOME"]);
    assert_eq!(app.user.as_deref(), Some("1000:1000"));
    assert_eq!(app.working_dir.as_deref(), Some("/work"));
    assert_eq!((app.init, app.read_only), (Some(true), true));
    assert_eq!(app.platform.as_deref(), Some("linux/amd64"));
    assert_eq!(app.tmpfs, ["/run"]);
    assert_eq!(app.labels["team"], "core");
    assert_eq!(app.labels["empty"], "");
    assert_eq!(app.environment["FROM_FILE"], "1");
    assert_eq!(
        app.environment["BOTH"], "env",
        "environment wins over env_file"
    );
    assert_eq!(app.environment["NUMBER"], "5432");
    assert_eq!(app.environment["FLAG"], "true");
    let ports: Vec<String> = app
        .ports
        .iter()
        .map(|p| {
            format!(
                "{:?} {:?} {}/{} {}",
                p.host_ip, p.host_port, p.container_port, p.protocol, p.field
            )
        })
        .collect();
    assert_eq!(
        ports,
        [
            "Some(\"127.0.0.1\") Some(8080) 80/tcp ports",
            "None Some(9000) 9000/udp ports",
            "None Some(9001) 9001/udp ports",
            "None None 7000/tcp expose",
        ]
    );
    assert_eq!(app.privileges.cap_drop, ["NET_RAW"]);
    assert_eq!(app.healthcheck.as_ref().unwrap().test, ["NONE"]);
    let sources: Vec<&MountSource> = app.mounts.iter().map(|m| &m.source).collect();
    assert_eq!(sources, [&MountSource::Tmpfs, &MountSource::Volume(None)]);
    p.write(
        ".devcontainer/compose.yml",
        "services:\n  app: {image: a, env_file: gone.env}\n",
    );
    assert!(message(p.read(&["compose.yml"], "app")).contains("gone.env does not exist"));
    p.write(
        ".devcontainer/compose.yml",
        "services:\n  app: {image: a, volumes: ['undeclared:/data']}\n",
    );
    assert!(message(p.read(&["compose.yml"], "app")).contains("'undeclared' is not declared"));
    p.write(
        ".devcontainer/compose.yml",
        "name: '${UNSET_NAME}'\nservices:\n  app: {image: a}\n",
    );
    assert!(message(p.read(&["compose.yml"], "app")).contains("project name is empty"));
}

#[test]
fn each_ignored_key_is_warned_about_by_name() {
    let p = Project::new();
    let keys: Vec<&str> = super::super::service_keys::IGNORED
        .iter()
        .map(|(k, _)| *k)
        .collect();
    let body: String = keys.iter().map(|k| format!("    {k}: x\n")).collect();
    p.write(
        ".devcontainer/compose.yml",
        &format!("services:\n  app:\n    image: a\n{body}"),
    );
    let plan = p.read(&["compose.yml"], "app").unwrap();
    for key in keys {
        let named = format!("services.app.{key} is ignored");
        assert!(plan.warnings.iter().any(|w| w.contains(&named)), "{key}");
    }
}

#[test]
fn a_yaml_alias_bomb_is_refused() {
    let p = Project::new();
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    text.push_str("services: {app: {image: a}}\n");
    p.write(".devcontainer/bomb.yml", &text);
    let e = message(p.read(&["bomb.yml"], "app"));
    assert!(e.contains("repetition limit"), "{e}");
}

#[test]
fn hostile_sizes_are_bounded() {
    let p = Project::new();
    let chain: String = (0..40)
        .map(|i| format!("  s{i}: {{extends: s{}}}\n", i + 1))
        .collect();
    p.write(
        ".devcontainer/compose.yml",
        &format!("services:\n  app: {{image: a}}\n{chain}  s40: {{image: b}}\n"),
    );
    assert!(message(p.read(&["compose.yml"], "app")).contains("extends goes more than 32"));
    let many: String = (0..300)
        .map(|i| format!("  s{i}: {{image: b}}\n"))
        .collect();
    p.write(".devcontainer/compose.yml", &format!("services:\n{many}"));
    assert!(message(p.read(&["compose.yml"], "s0")).contains("more than the 256"));
    let ranges: String = (0..3)
        .map(|i| format!("  s{i}: {{image: b, expose: ['1-30000']}}\n"))
        .collect();
    p.write(".devcontainer/compose.yml", &format!("services:\n{ranges}"));
    assert!(message(p.read(&["compose.yml"], "s0")).contains("more than the 65536"));
    p.write(
        ".devcontainer/compose.yml",
        "services:\n  app: {image: a, env_file: ../../../../../../../../etc/passwd}\n",
    );
    assert!(message(p.read(&["compose.yml"], "app")).contains("outside the project"));
}
