//! The whole reading over files on disk: merge order, `.env` and interpolation, `extends`
//! across files, profiles, order and cycles, port clashes, refused keys and host paths, and
//! the compose files' own reading bounds.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::compose::Condition;
use crate::error::{Error, ErrorCode};
use crate::scratch_dir::Scratch;

struct Project {
    dir: Scratch,
    sockets: Vec<PathBuf>,
}

impl Project {
    fn new() -> Project {
        let dir = Scratch::new("compose");
        std::fs::create_dir_all(dir.path(".devcontainer")).unwrap();
        Project {
            dir,
            sockets: Vec::new(),
        }
    }

    fn root(&self) -> &Path {
        &self.dir.0
    }

    fn write(&self, name: &str, text: &str) -> &Project {
        let path = self.dir.path(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    fn read_with(
        &self,
        files: &[&str],
        service: &str,
        run: &[&str],
        host: &[(&str, &str)],
        trust: &Trust,
    ) -> Result<ComposePlan> {
        let compose = ComposeConfig {
            files: files.iter().map(|f| f.to_string()).collect(),
            service: Some(service.to_string()),
            run_services: run.iter().map(|s| s.to_string()).collect(),
        };
        let vars: HashMap<String, String> = host
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let host_env = HostEnv::only(vars, &trust.local_env);
        read_compose_project(&ComposeRequest {
            compose: &compose,
            config_dir: &self.dir.path(".devcontainer"),
            project: self.root(),
            host_env: &host_env,
            trust,
            engine_sockets: &self.sockets,
        })
    }

    fn read(&self, files: &[&str], service: &str) -> Result<ComposePlan> {
        self.read_with(files, service, &[], &[], &Trust::default())
    }
}

fn names(plan: &ComposePlan) -> Vec<&str> {
    plan.services.iter().map(|s| s.name.as_str()).collect()
}

fn message(result: Result<ComposePlan>) -> String {
    let e: Error = result.unwrap_err();
    assert_eq!(e.code, ErrorCode::Devcontainer, "{}", e.message);
    e.message
}

#[test]
fn files_merge_in_order_with_paths_from_the_first_files_folder() {
    let p = Project::new();
    p.write(
        "compose.yml",
        "name: My_App.1\nservices:\n  app:\n    image: app:1\n    command: sleep infinity\n    environment: [A=1, B=2]\n    volumes: ['.:/workspace:cached', 'data:/data:ro,delegated']\n  db:\n    image: postgres\nvolumes:\n  data: {name: kept, driver: local}\n",
    )
    .write(
        ".devcontainer/override.yml",
        "services:\n  app:\n    image: app:2\n    command: [sh, -c, 'echo hi']\n    environment: {B: two}\n    volumes: ['./src:/src']\n",
    );
    let plan = p.read(&["../compose.yml", "override.yml"], "app").unwrap();
    assert_eq!(plan.name, "my_app1");
    assert_eq!(names(&plan), ["app", "db"]);
    let app = plan.service("app").unwrap();
    assert_eq!(app.image.as_deref(), Some("app:2"));
    assert_eq!(app.command.as_deref().unwrap(), ["sh", "-c", "echo hi"]);
    assert_eq!(app.environment["A"], "1");
    assert_eq!(app.environment["B"], "two");
    let sources: Vec<&MountSource> = app.mounts.iter().map(|m| &m.source).collect();
    assert_eq!(
        sources,
        [
            &MountSource::Project(PathBuf::new()),
            &MountSource::Volume(Some("data".into())),
            &MountSource::Project(PathBuf::from("src")),
        ]
    );
    assert_eq!(
        plan.volumes,
        [PlannedVolume {
            key: "data".into(),
            name: Some("kept".into())
        }]
    );
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.contains("volumes.data.driver")),
        "{:?}",
        plan.warnings
    );
    assert_eq!(plan.files[0], p.root().join("compose.yml"));
}

#[test]
fn dotenv_and_the_granted_host_environment_interpolate() {
    let p = Project::new();
    p.write(".devcontainer/.env", "TAG=from-dotenv\nPORT=5432\n")
        .write(
            ".devcontainer/compose.yml",
            "services:\n  app:\n    image: app:${TAG}\n    environment:\n      - GRANTED=${GRANTED}\n      - SECRET=${SECRET:-none}\n      - MISSING=$MISSING\n      - LITERAL=$$HOME\n      - FROM_HOST\n    expose: ['${PORT}']\n",
        );
    let trust = Trust {
        local_env: vec!["GRANTED".into(), "FROM_HOST".into(), "TAG".into()],
        ..Default::default()
    };
    let host = [
        ("GRANTED", "yes"),
        ("SECRET", "host-secret"),
        ("FROM_HOST", "h"),
        ("TAG", "from-host"),
    ];
    let plan = p
        .read_with(&["compose.yml"], "app", &[], &host, &trust)
        .unwrap();
    let app = &plan.services[0];
    assert_eq!(
        app.image.as_deref(),
        Some("app:from-host"),
        "the granted host variable wins over .env"
    );
    assert_eq!(app.environment["GRANTED"], "yes");
    assert_eq!(
        app.environment["SECRET"], "none",
        "an ungranted host variable is not read"
    );
    assert_eq!(app.environment["MISSING"], "");
    assert_eq!(app.environment["LITERAL"], "$HOME");
    assert_eq!(app.environment["FROM_HOST"], "h");
    assert_eq!(app.ports[0].container_port, 5432);
    assert_eq!(plan.host_env_not_read, ["MISSING", "SECRET"]);
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.contains("variable MISSING is not set")),
        "{:?}",
        plan.warnings
    );
    p.write(
        ".devcontainer/compose.yml",
        "services:\n  app:\n    image: \"app:${NEED:?set NEED}\"\n",
    );
    assert!(message(p.read(&["compose.yml"], "app"))
        .contains("required variable NEED is missing a value: set NEED"));
}

#[test]
fn extends_across_files_takes_paths_from_the_extended_file() {
    let p = Project::new();
    p.write("base/common.yml", "services:\n  base:\n    build: {context: ., args: [X=1]}\n    env_file: [base.env]\n    volumes: ['./data:/data']\n    healthcheck: {test: pg_isready, interval: 5s, retries: 3}\n  other:\n    extends: base\n    user: postgres\n")
        .write("base/base.env", "FROM_FILE=1\n")
        .write("base/Dockerfile", "FROM scratch\n")
        .write(".devcontainer/compose.yml", "services:\n  app:\n    image: a\n  db:\n    extends: {file: ../base/common.yml, service: other}\n    environment: {OWN: '2'}\n");
    let plan = p.read(&["compose.yml"], "app").unwrap();
    let db = plan.service("db").unwrap();
    let root = std::fs::canonicalize(p.root()).unwrap();
    let build = db.build.as_ref().unwrap();
    assert_eq!(build.context, root.join("base"));
    assert_eq!(build.dockerfile, root.join("base/Dockerfile"));
    assert_eq!(build.args["X"], "1");
    assert_eq!(db.environment["FROM_FILE"], "1");
    assert_eq!(db.environment["OWN"], "2");
    assert_eq!(db.user.as_deref(), Some("postgres"));
    assert_eq!(
        db.mounts[0].source,
        MountSource::Project(PathBuf::from("base/data"))
    );
    let check = db.healthcheck.as_ref().unwrap();
    assert_eq!(check.test, ["CMD-SHELL", "pg_isready"]);
    assert_eq!((check.interval_ms, check.retries), (Some(5000), Some(3)));
    p.write(
        ".devcontainer/compose.yml",
        "services:\n  app: {image: a, extends: b}\n  b: {extends: app}\n",
    );
    assert!(message(p.read(&["compose.yml"], "app")).contains("extends makes a cycle"));
}

#[test]
fn profiles_run_services_and_dependency_order() {
    let p = Project::new();
    p.write(
        ".devcontainer/compose.yml",
        "services:\n  app:\n    image: a\n    depends_on:\n      db: {condition: service_healthy}\n      seed: {condition: service_completed_successfully}\n  seed:\n    image: s\n    profiles: [tools]\n    depends_on: [db]\n  db:\n    image: d\n    healthcheck: {test: [CMD, pg_isready], timeout: 1s}\n  debug:\n    image: x\n    profiles: [debug]\n  extra:\n    image: e\n",
    );
    // seed is under an inactive profile: app, which needs it, cannot start.
    let inactive = message(p.read(&["compose.yml"], "app"));
    assert!(
        inactive.contains("'app' depends on 'seed', which is under the profiles tools"),
        "{inactive}"
    );
    p.write(".devcontainer/.env", "COMPOSE_PROFILES=tools\n");
    let plan = p.read(&["compose.yml"], "app").unwrap();
    assert_eq!(names(&plan), ["db", "seed", "app", "extra"]);
    let conditions: Vec<(&str, Condition)> = plan.services[2]
        .depends_on
        .iter()
        .map(|d| (d.service.as_str(), d.condition))
        .collect();
    assert_eq!(
        conditions,
        [
            ("db", Condition::Healthy),
            ("seed", Condition::CompletedSuccessfully)
        ]
    );
    assert_eq!(
        plan.services[0].healthcheck.as_ref().unwrap().test,
        ["CMD", "pg_isready"]
    );
    let only = p
        .read_with(&["compose.yml"], "app", &["db"], &[], &Trust::default())
        .unwrap();
    assert_eq!(names(&only), ["db", "seed", "app"]);
    p.write(".devcontainer/.env", "COMPOSE_PROFILES=debug,tools\n");
    let debug = p.read(&["compose.yml"], "app").unwrap();
    assert_eq!(names(&debug), ["db", "seed", "app", "debug", "extra"]);
    // Named in runServices, a profiled service starts without its profile being active.
    p.write(".devcontainer/.env", "");
    let named = p
        .read_with(&["compose.yml"], "debug", &["seed"], &[], &Trust::default())
        .unwrap();
    assert_eq!(names(&named), ["db", "seed", "debug"]);
    p.write(".devcontainer/compose.yml", "services:\n  app: {image: a, depends_on: [b]}\n  b: {image: b, network_mode: 'service:app'}\n");
    assert!(message(p.read(&["compose.yml"], "app"))
        .contains("depends_on makes a cycle: app → b → app"));
}

#[test]
fn two_services_on_one_port_are_refused() {
    let p = Project::new();
    p.write(
        ".devcontainer/compose.yml",
        "services:\n  app: {image: a, ports: ['8080:80']}\n  web: {image: w, expose: [80]}\n",
    );
    let e = message(p.read(&["compose.yml"], "app"));
    assert!(
        e.contains("services 'app' and 'web' both listen on container port 80/tcp"),
        "{e}"
    );
}

#[test]
fn what_reaches_the_host_is_refused_naming_the_grant() {
    let mut p = Project::new();
    let outside = Scratch::new("compose-outside");
    std::fs::write(outside.path("engine.sock"), "").unwrap();
    p.sockets = vec![outside.path("engine.sock")];
    p.write(
        ".devcontainer/compose.yml",
        &format!(
            "services:\n  app:\n    image: a\n    privileged: true\n    cap_add: [SYS_ADMIN]\n    volumes: ['{}:/host']\n",
            outside.0.display()
        ),
    );
    let e = p.read(&["compose.yml"], "app").unwrap_err();
    let allows: Vec<&str> = e.refusals.iter().map(|r| r.allow.as_str()).collect();
    assert_eq!(allows.len(), 4, "{allows:?}");
    assert!(allows.contains(&"privileged: true"));
    assert!(allows.contains(&"capabilities: [\"SYS_ADMIN\"]"));
    assert!(allows.iter().any(|a| a.starts_with("hostPaths")));
    assert!(allows.contains(&"engineSocket: true"));
    let trust = Trust {
        privileged: true,
        capabilities: vec!["ALL".into()],
        host_paths: vec![outside.0.clone()],
        engine_socket: true,
        ..Default::default()
    };
    let plan = p
        .read_with(&["compose.yml"], "app", &[], &[], &trust)
        .unwrap();
    let app = &plan.services[0];
    assert!(app.privileges.privileged);
    assert_eq!(
        app.mounts[0].source,
        MountSource::Host(std::fs::canonicalize(&outside.0).unwrap())
    );
    for mode in ["host", "container:other"] {
        p.write(
            ".devcontainer/compose.yml",
            &format!("services:\n  app: {{image: a, network_mode: '{mode}'}}\n"),
        );
        assert!(
            message(p.read_with(&["compose.yml"], "app", &[], &[], &trust))
                .contains("network_mode")
        );
    }
    p.write(
        ".devcontainer/compose.yml",
        "services:\n  app:\n    image: a\n    build: {context: ., ssh: [default]}\n",
    );
    assert!(message(p.read(&["compose.yml"], "app")).contains("build.ssh is refused"));
    p.write(
        ".devcontainer/compose.yml",
        "services:\n  app:\n    build: 'https://example.invalid/repo.git'\n",
    );
    assert!(message(p.read(&["compose.yml"], "app")).contains("build.context"));
    p.write(
        ".devcontainer/compose.yml",
        &format!("services:\n  app:\n    build: {}\n", outside.0.display()),
    );
    let e = p.read(&["compose.yml"], "app").unwrap_err();
    assert!(
        e.refusals[0].allow.starts_with("hostPaths"),
        "{}",
        e.message
    );
}

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
