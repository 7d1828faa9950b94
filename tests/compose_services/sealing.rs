//! The set serves the app by name and nothing else: `psql -h db` and `redis-cli -h cache`
//! work from the app, no member reaches a canary on the host; the containers are labelled as
//! the session's with the pids budget shared; progress names each service; the set stops
//! and starts again with its data; teardown leaves nothing.

use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use container_isolation::compose_services::{
    holder_name, remove_service_set, share_pids, start_service_set, stop_service_set,
    ServiceSetSpec,
};
use container_isolation::container_runtime::{ContainerRuntime, DockerRuntime};
use container_isolation::engine::Engine;
use container_isolation::progress::{Phase, Progress, ProgressEvent, ProgressSink};
use container_isolation::runtime::{labels, Lifetime};

use crate::support::*;

/// The progress steps reported, in order.
#[derive(Default)]
struct Events(Mutex<Vec<String>>);

impl ProgressSink for Events {
    fn event(&self, event: ProgressEvent) {
        assert_eq!(event.phase, Phase::Create);
        self.0.lock().unwrap().push(event.detail);
    }
}

/// A TCP listener on every host address that counts the connections it accepts.
struct Canary {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

fn canary() -> Canary {
    let listener = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    Canary { port, accepted }
}

/// The host's first non-loopback IPv4 address.
fn host_address() -> String {
    let out = std::process::Command::new("hostname")
        .arg("-I")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.split_whitespace()
        .find(|a| {
            a.parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| !ip.is_loopback())
        })
        .expect("the host has an IPv4 address besides loopback")
        .to_string()
}

/// The canary at `address` cannot be reached from `container`.
async fn unreachable(runtime: &DockerRuntime, container: &str, address: &str, canary: &Canary) {
    let port = canary.port.to_string();
    let (code, text) = run(
        runtime,
        container,
        &[
            "timeout",
            "5",
            "bash",
            "-c",
            "exec 3<>/dev/tcp/\"$0\"/\"$1\"",
            address,
            &port,
        ],
    )
    .await;
    assert_ne!(code, 0, "{container} reached {address}:{port}: {text}");
    assert_eq!(
        canary.accepted.load(Ordering::SeqCst),
        0,
        "{container} -> {address}"
    );
}

async fn assert_labelled_as_the_session(engine: &Engine, spec: &ServiceSetSpec) {
    let holder = holder_name(&spec.container);
    let shares = share_pids(spec.limits.pids, spec.services.len()).unwrap();
    assert_eq!(shares.holder, Some(8));
    for name in [
        holder.clone(),
        format!("{holder}-db"),
        format!("{holder}-cache"),
    ] {
        let inspected = engine.inspect_container(&name, &name).await.unwrap();
        let l = inspected.config.unwrap().labels.unwrap();
        assert_eq!(l[labels::MANAGED], "true", "{name}");
        assert_eq!(l[labels::SESSION], spec.session_id, "{name}");
        assert_eq!(l[labels::SERVICE_SET], holder, "{name}");
        assert_eq!(l[labels::LIFETIME], spec.lifetime.as_str(), "{name}");
        assert_eq!(
            l[labels::OWNER_PID],
            std::process::id().to_string(),
            "{name}"
        );
        let host = inspected.host_config.unwrap();
        let want_pids = if name == holder {
            shares.holder
        } else {
            shares.service
        };
        assert_eq!(host.pids_limit, want_pids, "{name}: the budget is shared");
        assert_eq!(host.memory, Some(512 << 20), "{name}");
    }
    let (_, volumes) = set_members(engine, &holder).await;
    assert_eq!(volumes, [format!("{holder}-pgdata")]);
}

async fn sealed_set_serves_the_app_and_nothing_else(socket: &str, tag: &str) {
    let runtime = runtime(socket, tag);
    let engine = runtime.engine().await.unwrap();
    let container = format!("cr-compose-{tag}");
    let mut spec = db_and_cache(&container, Lifetime::Process);
    let events = Arc::new(Events::default());
    spec.progress = Progress::new(events.clone(), &spec.session_id);
    let holder = holder_name(&container);
    clear_set(&engine, &container, &["pgdata"]).await;
    let started = std::time::Instant::now();
    let set = start_service_set(&runtime, &spec)
        .await
        .expect("start the set");
    eprintln!(
        "{tag}: the set was ready in {} ms",
        started.elapsed().as_millis()
    );
    let shares = share_pids(Some(1024), 3).unwrap();
    assert_eq!(set.app_pids, shares.app);
    assert_eq!(
        shares.holder.unwrap() + 3 * shares.service.unwrap() + shares.app.unwrap(),
        1024
    );
    let app = app_container(&runtime, &set, &spec).await;
    assert_labelled_as_the_session(&engine, &spec).await;
    let steps = events.0.lock().unwrap().clone();
    for step in [
        "creating service db",
        "starting service cache",
        "waiting for service db to be healthy",
        "waiting for service migrate to complete successfully",
        "services ready",
    ] {
        assert!(
            steps.iter().any(|s| s.starts_with(step)),
            "{step}: {steps:?}"
        );
    }
    let (code, text) = psql(&runtime, &app, "-tAc", "select count(*) from migrated").await;
    assert_eq!(
        (code, text.trim()),
        (0, "0"),
        "migrate ran before the set was ready: {text}"
    );

    let (code, text) = psql(&runtime, &app, "-tAc", "select 1").await;
    assert_eq!((code, text.trim()), (0, "1"), "psql from the app: {text}");
    let (code, text) = run(&runtime, &app, &["redis-cli", "-h", "cache", "ping"]).await;
    assert_eq!(
        (code, text.trim()),
        (0, "PONG"),
        "redis-cli from the app: {text}"
    );
    let (_, hosts) = run(&runtime, &app, &["getent", "hosts", "db", "cache", "app"]).await;
    assert_eq!(hosts.matches("127.0.0.1").count(), 3, "{hosts}");

    let canary = canary();
    let address = host_address();
    for member in [
        app.clone(),
        format!("{holder}-db"),
        format!("{holder}-cache"),
    ] {
        unreachable(&runtime, &member, "127.0.0.1", &canary).await;
        unreachable(&runtime, &member, &address, &canary).await;
        let (_, ifaces) = run(&runtime, &member, &["cat", "/proc/net/dev"]).await;
        // /proc/net/dev: two header lines, then one line per interface.
        let names: Vec<&str> = ifaces
            .lines()
            .skip(2)
            .filter_map(|l| l.split(':').next())
            .collect();
        assert_eq!(
            names.iter().map(|n| n.trim()).collect::<Vec<_>>(),
            ["lo"],
            "{member}"
        );
    }

    // Stopped and started again (a session's stop and start): the same containers, the
    // database's volume kept.
    let (code, text) = psql(&runtime, &app, "-c", "create table kept (n int)").await;
    assert_eq!(code, 0, "{text}");
    runtime.stop(&app, None).await.unwrap();
    stop_service_set(&runtime, &holder, None).await.unwrap();
    let again = start_service_set(&runtime, &spec)
        .await
        .expect("start the set again");
    assert_eq!(again.services, set.services);
    runtime.start(&app).await.unwrap();
    let (code, text) = psql(&runtime, &app, "-tAc", "select count(*) from kept").await;
    assert_eq!(
        (code, text.trim()),
        (0, "0"),
        "the table survived the restart: {text}"
    );

    let removed = remove_service_set(&engine, &holder).await.unwrap();
    assert!(
        removed.contains(&holder) && removed.contains(&app),
        "{removed:?}"
    );
    assert_eq!(set_members(&engine, &holder).await, (vec![], vec![]));
}

#[tokio::test(flavor = "multi_thread")]
async fn sealed_set_on_dockerd() {
    sealed_set_serves_the_app_and_nothing_else(DOCKER, "docker-sealed").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sealed_set_on_podman() {
    if available(PODMAN) {
        sealed_set_serves_the_app_and_nothing_else(PODMAN, "podman-sealed").await;
    }
}
