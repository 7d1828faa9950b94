//! The whole reading over files on disk: merge order, `.env` and interpolation, `extends`
//! across files, profiles, order and cycles, port clashes, refused keys and host paths
//! (each key's own fate and the reading's bounds: `compose_key_tests.rs`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::compose::Condition;
use crate::error::{Error, ErrorCode};
use crate::scratch_dir::Scratch;

pub(super) struct Project {
    pub(super) dir: Scratch,
    sockets: Vec<PathBuf>,
}

impl Project {
    pub(super) fn new() -> Project {
        let dir = Scratch::new("compose");
        std::fs::create_dir_all(dir.path(".devcontainer")).unwrap();
        Project {
            dir,
            sockets: Vec::new(),
        }
    }

    pub(super) fn root(&self) -> &Path {
        &self.dir.0
    }

    pub(super) fn write(&self, name: &str, text: &str) -> &Project {
        let path = self.dir.path(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }

    pub(super) fn read_with(
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

    pub(super) fn read(&self, files: &[&str], service: &str) -> Result<ComposePlan> {
        self.read_with(files, service, &[], &[], &Trust::default())
    }
}

pub(super) fn names(plan: &ComposePlan) -> Vec<&str> {
    plan.services.iter().map(|s| s.name.as_str()).collect()
}

pub(super) fn message(result: Result<ComposePlan>) -> String {
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
