//! The set's one way out is the session's egress relay: the session container, relayed and
//! joined to the holder, runs the relay on the shared loopback, so a service reaches a
//! destination the session's policy allows through it, and not one it does not.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use container_isolation::compose_services::{holder_name, remove_service_set, start_service_set};
use container_isolation::container_runtime::{
    ContainerConfig, ContainerRuntime, DockerRuntime, RuntimeOptions,
};
use container_isolation::egress::{Egress, EgressMode, EgressSpec};
use container_isolation::engine::PullPolicy;
use container_isolation::runtime::Lifetime;

use crate::support::*;

/// An HTTP server on the host's loopback that answers `ok` and counts its connections.
fn http_canary() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            let mut head = [0u8; 1024];
            let _ = stream.read(&mut head);
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
    });
    (port, served)
}

async fn services_go_out_through_the_sessions_relay(socket: &str, tag: &str) {
    let base = std::env::temp_dir().join(format!("ci-cargo-compose-{tag}"));
    std::fs::create_dir_all(&base).unwrap();
    let runtime = DockerRuntime::new(RuntimeOptions {
        engine: engine_options(socket),
        base_dir: Some(base.to_string_lossy().into()),
        agent: true,
        pull: PullPolicy::Never,
        ..Default::default()
    });
    let engine = runtime.engine().await.unwrap();
    let container = format!("cr-compose-{tag}");
    let mut spec = db_and_cache(&container, Lifetime::Process);
    spec.services.retain(|s| s.name == "cache");
    spec.services[0].depends_on.clear();
    spec.app_depends_on.clear();
    let holder = holder_name(&container);
    let _ = remove_service_set(&engine, &holder).await;
    let set = start_service_set(&runtime, &spec)
        .await
        .expect("start the set");

    let (allowed, allowed_served) = http_canary();
    let (denied, denied_served) = http_canary();
    let mut config = ContainerConfig {
        name: Some(container.clone()),
        image: Some(POSTGRES.into()),
        working_directory: "/".into(),
        lifetime: spec.lifetime,
        session_id: Some(spec.session_id.clone()),
        egress: Some(Egress {
            spec: EgressSpec {
                mode: EgressMode::Policy,
                allow: vec![format!("127.0.0.1:{allowed}")],
                ..Default::default()
            },
            asker: None,
            events: None,
        }),
        ..Default::default()
    };
    set.join(&mut config, &spec.app_service);
    let app = runtime
        .create(config)
        .await
        .expect("create the relayed app");
    runtime
        .start(&app)
        .await
        .expect("start the relayed app and its relay");

    let cache = format!("{holder}-cache");
    let through_relay = |port: u16| {
        let url = format!("http://127.0.0.1:{port}/");
        vec![
            "curl",
            "-sS",
            "-m",
            "10",
            "--proxy",
            "http://127.0.0.1:3128",
            "-o",
            "-",
        ]
        .into_iter()
        .map(String::from)
        .chain([url])
        .collect::<Vec<String>>()
    };
    let words = through_relay(allowed);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let (code, text) = run(&runtime, &cache, &words).await;
    assert_eq!(
        (code, text.as_str()),
        (0, "ok"),
        "cache -> allowed through the relay"
    );
    assert_eq!(allowed_served.load(Ordering::SeqCst), 1);
    let words = through_relay(denied);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let (_, text) = run(&runtime, &cache, &words).await;
    assert_ne!(text, "ok", "cache -> denied through the relay");
    assert_eq!(denied_served.load(Ordering::SeqCst), 0, "{text}");

    remove_service_set(&engine, &holder).await.unwrap();
    assert_eq!(set_members(&engine, &holder).await, (vec![], vec![]));
}

#[tokio::test(flavor = "multi_thread")]
async fn relay_on_dockerd() {
    services_go_out_through_the_sessions_relay(DOCKER, "docker-egress").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn relay_on_podman() {
    if available(PODMAN) {
        services_go_out_through_the_sessions_relay(PODMAN, "podman-egress").await;
    }
}
