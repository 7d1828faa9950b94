//! Detection order, explicit options and docker contexts, against temporary config folders.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::*;
use crate::error::ErrorCode;

fn env() -> DetectionEnv {
    DetectionEnv {
        xdg_runtime_dir: Some("/run/user/1000".into()),
        home: Some("/home/u".into()),
        ..Default::default()
    }
}

fn shown(list: &[Candidate]) -> Vec<String> {
    list.iter().map(|c| c.endpoint.to_string()).collect()
}

fn temp_config() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ci-det-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_context(dir: &Path, name: &str, host: &str) {
    let meta = dir
        .join("contexts/meta")
        .join(hex::encode(Sha256::digest(name.as_bytes())));
    std::fs::create_dir_all(&meta).unwrap();
    let json = serde_json::json!({"Name": name, "Endpoints": {"docker": {"Host": host}}});
    std::fs::write(meta.join("meta.json"), json.to_string()).unwrap();
}

#[test]
fn default_order_follows_the_contract() {
    let list = candidates(&EngineOptions::default(), &env()).unwrap();
    assert_eq!(
        shown(&list),
        [
            "unix:///var/run/docker.sock",
            "unix:///run/user/1000/docker.sock",
            "unix:///home/u/.docker/run/docker.sock",
            "unix:///home/u/.docker/desktop/docker.sock",
            "unix:///run/podman/podman.sock",
            "unix:///run/user/1000/podman/podman.sock",
        ]
    );
}

#[test]
fn environment_hosts_come_first_and_tcp_becomes_http() {
    let mut e = env();
    e.docker_host = Some("tcp://127.0.0.1:2375".into());
    e.container_host = Some("unix:///tmp/podman.sock".into());
    let list = candidates(&EngineOptions::default(), &e).unwrap();
    assert_eq!(
        list[0].endpoint,
        Endpoint::Http("http://127.0.0.1:2375".into())
    );
    assert_eq!(list[0].source, "DOCKER_HOST");
    assert!(!list[0].explicit);
    assert_eq!(list[1].endpoint, Endpoint::Unix("/tmp/podman.sock".into()));
}

#[test]
fn kind_restricts_to_one_family() {
    let opts = EngineOptions {
        kind: Some(EngineKind::Podman),
        ..Default::default()
    };
    let list = candidates(&opts, &env()).unwrap();
    assert!(list
        .iter()
        .all(|c| c.family_hint == Some(EngineKind::Podman)));
    assert_eq!(list.len(), 2);
}

#[test]
fn explicit_socket_is_the_only_candidate() {
    let opts = EngineOptions {
        socket_path: Some("/nope/docker.sock".into()),
        ..Default::default()
    };
    let list = candidates(&opts, &env()).unwrap();
    assert_eq!(shown(&list), ["unix:///nope/docker.sock"]);
    assert!(list[0].explicit);
}

#[test]
fn ssh_hosts_carry_the_ssh_options() {
    let opts = EngineOptions {
        host: Some("ssh://me@box".into()),
        ssh: SshOptions {
            key_file: Some("/k".into()),
            known_hosts_file: None,
        },
        ..Default::default()
    };
    let list = candidates(&opts, &env()).unwrap();
    match &list[0].endpoint {
        Endpoint::Ssh(target) => assert_eq!(target.options.key_file, Some("/k".into())),
        other => panic!("{other:?}"),
    }
}

#[test]
fn tls_option_fills_in_default_files() {
    let certs = temp_config();
    for f in ["ca.pem", "cert.pem", "key.pem"] {
        std::fs::write(certs.join(f), "pem").unwrap();
    }
    let mut e = env();
    e.docker_cert_path = Some(certs.to_string_lossy().into());
    let mut opts = EngineOptions {
        host: Some("tcp://h:2376".into()),
        tls: Some(TlsOptions::default()),
        ..Default::default()
    };
    fn expect(list: Vec<Candidate>, ca: &str, cert: &str) {
        match &list[0].endpoint {
            Endpoint::Https { tls, .. } => {
                assert_eq!(tls.ca.as_deref(), Some(Path::new(ca)));
                assert_eq!(tls.cert.as_deref(), Some(Path::new(cert)));
            }
            other => panic!("{other:?}"),
        }
    }
    let ca = certs.join("ca.pem").to_string_lossy().into_owned();
    let cert = certs.join("cert.pem").to_string_lossy().into_owned();
    expect(candidates(&opts, &e).unwrap(), &ca, &cert);
    opts.tls = Some(TlsOptions {
        ca: Some("/mine/ca.pem".into()),
        cert: Some("/mine/cert.pem".into()),
        key: Some("/mine/key.pem".into()),
        insecure_skip_verify: false,
    });
    expect(
        candidates(&opts, &e).unwrap(),
        "/mine/ca.pem",
        "/mine/cert.pem",
    );
    std::fs::remove_dir_all(certs).unwrap();
}

#[test]
fn conflicting_or_misplaced_options_are_invalid() {
    for opts in [
        EngineOptions {
            host: Some("ftp://x".into()),
            ..Default::default()
        },
        EngineOptions {
            host: Some("unix:///x.sock".into()),
            tls: Some(TlsOptions::default()),
            ..Default::default()
        },
        EngineOptions {
            tls: Some(TlsOptions::default()),
            ..Default::default()
        },
        EngineOptions {
            host: Some("tcp://h:1".into()),
            context: Some("x".into()),
            ..Default::default()
        },
    ] {
        let err = candidates(&opts, &env()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArgument, "{opts:?}");
    }
}

#[test]
fn docker_host_beats_docker_context_beats_current_context() {
    let dir = temp_config();
    write_context(&dir, "from-env", "tcp://10.0.0.1:2375");
    write_context(&dir, "from-config", "tcp://10.0.0.2:2375");
    write_context(&dir, "asked", "ssh://me@box");
    std::fs::write(
        dir.join("config.json"),
        r#"{"currentContext":"from-config"}"#,
    )
    .unwrap();
    let mut e = env();
    e.docker_config = Some(dir.to_string_lossy().into());
    let first = |opts: &EngineOptions, e: &DetectionEnv| {
        let list = candidates(opts, e).unwrap();
        (list[0].endpoint.to_string(), list[0].source)
    };
    let auto = EngineOptions::default();
    assert_eq!(
        first(&auto, &e),
        (
            "http://10.0.0.2:2375".into(),
            "docker config currentContext"
        )
    );
    e.docker_context = Some("from-env".into());
    assert_eq!(
        first(&auto, &e),
        ("http://10.0.0.1:2375".into(), "DOCKER_CONTEXT")
    );
    e.docker_host = Some("tcp://10.0.0.3:2375".into());
    assert_eq!(
        first(&auto, &e),
        ("http://10.0.0.3:2375".into(), "DOCKER_HOST")
    );
    let asked = EngineOptions {
        context: Some("asked".into()),
        ..Default::default()
    };
    assert_eq!(first(&asked, &e), ("ssh://me@box".into(), "context option"));
    let default = EngineOptions {
        context: Some("default".into()),
        ..Default::default()
    };
    assert_eq!(
        first(&default, &e),
        ("http://10.0.0.3:2375".into(), "DOCKER_HOST")
    );
    e.docker_host = None;
    assert_eq!(first(&default, &e).0, "unix:///var/run/docker.sock");

    e.docker_context = Some("default".into());
    assert_eq!(first(&auto, &e).0, "unix:///var/run/docker.sock");
    e.docker_context = Some("gone".into());
    let err = candidates(&auto, &e).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidArgument);
    assert!(err.message.contains("'gone'"), "{}", err.message);
    let missing = EngineOptions {
        context: Some("missing".into()),
        ..Default::default()
    };
    let err = candidates(&missing, &e).unwrap_err();
    assert!(err.message.contains("'missing'"), "{}", err.message);
    std::fs::remove_dir_all(dir).unwrap();
}
