//! A compose devcontainer's other services as the session runs them: what the trust grants
//! them is kept (and what it does not is refused, naming the grant), their binds of the
//! project are of the session clone's paths, checked there.

use super::*;
use crate::devcontainer::read_devcontainer_config;
use crate::scratch_dir::Scratch;

const DB: &str = "services:\n  app:\n    image: app-image\n  db:\n    image: db-image\n    cap_add: [NET_ADMIN]\n    devices: [/dev/fuse]\n    pid: host\n    volumes:\n      - ./init.txt:/docker-entrypoint-initdb.d/init.txt:ro\n      - .:/code\n";

struct Session {
    project: Scratch,
    clone: Scratch,
}

impl Session {
    fn new(compose: &str) -> Session {
        let project = Scratch::new("ccfg-project");
        std::fs::create_dir_all(project.path(".devcontainer")).unwrap();
        std::fs::write(
            project.path(".devcontainer/devcontainer.json"),
            r#"{"dockerComposeFile": "../compose.yml", "service": "app", "workspaceFolder": "/workspace"}"#,
        )
        .unwrap();
        std::fs::write(project.path("compose.yml"), compose).unwrap();
        std::fs::write(project.path("init.txt"), "project").unwrap();
        let clone = Scratch::new("ccfg-clone");
        std::fs::write(clone.path("init.txt"), "clone").unwrap();
        Session { project, clone }
    }

    fn read(&self, trust: &Trust) -> Result<ComposeSession> {
        let config = read_devcontainer_config(&self.project.0).unwrap().unwrap();
        read_compose_session(&config, &self.project.0, &self.clone.0, trust, &[])
    }
}

fn granting() -> Trust {
    Trust {
        capabilities: vec!["NET_ADMIN".into()],
        devices: true,
        host_namespaces: true,
        ..Default::default()
    }
}

#[test]
fn what_the_trust_grants_a_service_is_in_its_spec() {
    let session = Session::new(DB);
    let read = session.read(&granting()).unwrap();
    let db = &read.services.services[0];
    assert_eq!(db.name, "db");
    assert_eq!(db.privileges.cap_add, ["NET_ADMIN"]);
    assert_eq!(db.privileges.devices, ["/dev/fuse"]);
    assert_eq!(db.privileges.namespaces["pid"], "host");
    assert_eq!(
        db.binds,
        [
            BindMount {
                source: BindSource::Clone("init.txt".into()),
                target: "/docker-entrypoint-initdb.d/init.txt".into(),
                read_only: true,
            },
            BindMount {
                source: BindSource::Clone("".into()),
                target: "/code".into(),
                read_only: false,
            }
        ]
    );
}

#[test]
fn what_it_does_not_grant_is_refused_naming_the_grant() {
    let session = Session::new(DB);
    let err = session.read(&Trust::default()).err().unwrap();
    assert_eq!(err.code, ErrorCode::Devcontainer);
    let allows: Vec<&str> = err.refusals.iter().map(|r| r.allow.as_str()).collect();
    assert_eq!(
        allows,
        [
            "capabilities: [\"NET_ADMIN\"]",
            "devices: true",
            "hostNamespaces: true"
        ]
    );
    assert!(err.refusals.iter().all(|r| r.field == "services.db"));
}

#[test]
fn a_symlink_in_the_clone_is_not_mounted() {
    let session = Session::new(DB);
    std::fs::remove_file(session.clone.path("init.txt")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", session.clone.path("init.txt")).unwrap();
    let err = session.read(&granting()).err().unwrap();
    assert_eq!(err.code, ErrorCode::Devcontainer);
    assert!(
        err.message.contains("services.db.volumes") && err.message.contains("symlink"),
        "{}",
        err.message
    );
}

#[test]
fn a_host_path_is_mounted_only_when_trusted() {
    let outside = Scratch::new("ccfg-host");
    let compose = format!(
        "services:\n  app:\n    image: a\n  db:\n    image: d\n    volumes: ['{}:/data']\n",
        outside.0.display()
    );
    let session = Session::new(&compose);
    let err = session.read(&Trust::default()).err().unwrap();
    assert!(
        err.refusals[0].allow.starts_with("hostPaths"),
        "{:?}",
        err.refusals
    );
    let trust = Trust {
        host_paths: vec![outside.0.clone()],
        ..Default::default()
    };
    let read = session.read(&trust).unwrap();
    let canonical = std::fs::canonicalize(&outside.0).unwrap();
    assert_eq!(
        read.services.services[0].binds[0].source,
        BindSource::Host(canonical)
    );
}

#[test]
fn a_namespace_of_another_service_is_that_services_in_the_set() {
    let compose = "services:\n  app:\n    image: a\n  db:\n    image: d\n  web:\n    image: w\n    depends_on: [db]\n    ipc: 'service:db'\n  late:\n    image: l\n    pid: 'service:web'\n";
    let session = Session::new(compose);
    let read = session.read(&granting()).unwrap();
    let web = read
        .services
        .services
        .iter()
        .find(|s| s.name == "web")
        .unwrap();
    assert_eq!(web.privileges.namespaces["ipc"], "service:db");
    let own = "services:\n  app:\n    image: a\n  db:\n    image: d\n    ipc: 'service:app'\n";
    let err = Session::new(own).read(&granting()).err().unwrap();
    assert!(
        err.message.contains("not started before it"),
        "{}",
        err.message
    );
}

#[test]
fn the_sessions_own_service_keeps_its_cap_drop_devices_and_namespaces() {
    let compose = "services:\n  app:\n    image: a\n    cap_drop: [NET_RAW]\n    devices: [/dev/fuse]\n    pid: host\n";
    let read = Session::new(compose).read(&granting()).unwrap();
    let run = &read.config.run_args.privileges;
    assert_eq!(run.cap_drop, ["NET_RAW"]);
    assert_eq!(run.devices, ["/dev/fuse"]);
    assert_eq!(run.namespaces["pid"], "host");
    let joined = "services:\n  app:\n    image: a\n    ipc: 'service:db'\n  db:\n    image: d\n";
    let err = Session::new(joined).read(&granting()).err().unwrap();
    assert!(
        err.message.contains("joins no other container's namespace"),
        "{}",
        err.message
    );
}
