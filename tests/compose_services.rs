//! A compose service set sealed in one network namespace, against dockerd and Podman's
//! Docker-compatible service (provisioned by `npm test` with the offline `postgres` and
//! `redis` test images): `db` (PostgreSQL, healthcheck `pg_isready`) and `cache` (Redis)
//! reached by name from an app container that joins the holder; nothing in the set reaches
//! a canary on the host's loopback or on a host address; the set is labelled as the
//! session's and gone after teardown, after `reapOrphans`, and after the watchdog sees its
//! owner SIGKILLed; a service that never becomes healthy fails the start with
//! `SERVICE_NOT_READY` and leaves nothing.

use std::collections::{HashMap, HashSet};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use container_isolation::compose_services::{
    holder_name, remove_service_set, share_pids, start_service_set, stop_service_set, Condition,
    Dependency, ServiceSet, ServiceSetSpec, ServiceSpec, VolumeMount,
};
use container_isolation::container_runtime::{
    ContainerConfig, ContainerRuntime, DockerRuntime, Healthcheck, RuntimeOptions,
};
use container_isolation::engine::{Engine, EngineOptions, PullPolicy};
use container_isolation::error::ErrorCode;
use container_isolation::progress::{Phase, Progress, ProgressEvent, ProgressSink};
use container_isolation::reaper::{reap_containers, reap_volumes, watch_owner};
use container_isolation::runtime::exec::ExecRequest;
use container_isolation::runtime::{labels, Lifetime, OwnerIdentity, ResourceLimits};
use container_isolation::workspace_volume::labelled_volumes;

const POSTGRES: &str = "container-isolation-test:postgres";
const REDIS: &str = "container-isolation-test:redis";
const DOCKER: &str = "/var/run/docker.sock";
const PODMAN: &str = "/run/podman/podman.sock";
/// The child process of the watchdog test: its engine socket and session container name.
const CHILD_ENV: &str = "CI_COMPOSE_SERVICES_CHILD";

fn engine_options(socket: &str) -> EngineOptions {
    EngineOptions {
        socket_path: Some(socket.to_string()),
        ..Default::default()
    }
}

/// Podman's service may be absent (`PROVISION_PODMAN=0`): its tests then say so and pass.
fn available(socket: &str) -> bool {
    let there = std::path::Path::new(socket).exists();
    if !there {
        eprintln!("{socket} is absent (PROVISION_PODMAN=0?): this engine's test does not run");
    }
    there
}

fn runtime(socket: &str, base: &str) -> DockerRuntime {
    // It exists while the test runs: `npm test`'s sweep takes containers whose base
    // directory is gone for an interrupted run's.
    let dir = std::env::temp_dir().join(format!("ci-cargo-compose-{base}"));
    std::fs::create_dir_all(&dir).unwrap();
    DockerRuntime::new(RuntimeOptions {
        engine: engine_options(socket),
        base_dir: Some(dir.to_string_lossy().into()),
        pull: PullPolicy::Never,
        ..Default::default()
    })
}

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

fn healthy(service: &str) -> Dependency {
    Dependency {
        service: service.into(),
        condition: Condition::Healthy,
    }
}

/// `db` (healthcheck `pg_isready`, its data in a named volume), `cache` and `migrate` (a
/// one-off `psql`), which wait for `db` to be healthy; the app waits for all three, and for
/// `migrate` to complete successfully.
fn db_and_cache(container: &str, lifetime: Lifetime) -> ServiceSetSpec {
    let db = ServiceSpec {
        name: "db".into(),
        image: POSTGRES.into(),
        environment: [(
            "PGDATA".to_string(),
            "/var/lib/postgresql/data/pg".to_string(),
        )]
        .into(),
        healthcheck: Some(Healthcheck {
            test: argv(&["CMD", "pg_isready", "-h", "127.0.0.1", "-U", "postgres"]),
            interval: Some(Duration::from_millis(500)),
            timeout: Some(Duration::from_secs(5)),
            retries: Some(60),
            start_period: None,
        }),
        volumes: vec![VolumeMount {
            volume: "pgdata".into(),
            target: "/var/lib/postgresql/data".into(),
            read_only: false,
        }],
        tmpfs: vec!["/tmp".into()],
        labels: [("team".to_string(), "db".to_string())].into(),
        ..Default::default()
    };
    let cache = ServiceSpec {
        name: "cache".into(),
        image: REDIS.into(),
        depends_on: vec![healthy("db")],
        ..Default::default()
    };
    let migrate = ServiceSpec {
        name: "migrate".into(),
        image: POSTGRES.into(),
        command: Some(argv(&[
            "psql",
            "-h",
            "db",
            "-U",
            "postgres",
            "-c",
            "create table if not exists migrated (n int)",
        ])),
        depends_on: vec![healthy("db")],
        ..Default::default()
    };
    ServiceSetSpec {
        session_id: format!("{container}-session"),
        container: container.into(),
        app_service: "app".into(),
        app_depends_on: vec![
            healthy("db"),
            Dependency {
                service: "cache".into(),
                condition: Condition::Started,
            },
            Dependency {
                service: "migrate".into(),
                condition: Condition::CompletedSuccessfully,
            },
        ],
        holder_image: POSTGRES.into(),
        services: vec![db, cache, migrate],
        lifetime,
        limits: ResourceLimits {
            pids: Some(1024),
            memory: Some(512 << 20),
            ..Default::default()
        },
        ready_timeout: Duration::from_secs(90),
        ..Default::default()
    }
}

/// The session container of the set: our keep-alive in the postgres image (it has `psql`
/// and `redis-cli`), joined to the holder.
async fn app_container(runtime: &DockerRuntime, set: &ServiceSet, spec: &ServiceSetSpec) -> String {
    let mut config = ContainerConfig {
        name: Some(spec.container.clone()),
        image: Some(POSTGRES.into()),
        working_directory: "/".into(),
        lifetime: spec.lifetime,
        session_id: Some(spec.session_id.clone()),
        resources: spec.limits,
        ..Default::default()
    };
    set.join(&mut config, &spec.app_service);
    let id = runtime
        .create(config)
        .await
        .expect("create the app container");
    runtime.start(&id).await.expect("start the app container");
    id
}

async fn run(runtime: &DockerRuntime, container: &str, command: &[&str]) -> (i64, String) {
    let outcome = runtime
        .exec(
            container,
            ExecRequest {
                command: argv(command),
                timeout: Some(Duration::from_secs(20)),
                ..Default::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("exec {command:?} in {container}: {e}"));
    let text = String::from_utf8_lossy(&outcome.stdout).into_owned()
        + &String::from_utf8_lossy(&outcome.stderr);
    (outcome.exit_code, text)
}

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

async fn set_members(engine: &Engine, holder: &str) -> (Vec<String>, Vec<String>) {
    let filter = HashMap::from([("label", vec![format!("{}={holder}", labels::SERVICE_SET)])]);
    let options = bollard::query_parameters::ListContainersOptionsBuilder::default()
        .all(true)
        .filters(&filter)
        .build();
    let containers = engine
        .docker()
        .list_containers(Some(options))
        .await
        .unwrap()
        .into_iter()
        .flat_map(|c| c.names.unwrap_or_default())
        .collect();
    let volumes = labelled_volumes(engine, &[format!("{}={holder}", labels::SERVICE_SET)])
        .await
        .unwrap()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    (containers, volumes)
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
    let _ = remove_service_set(&engine, &holder).await;
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
    let (code, text) = run(
        &runtime,
        &app,
        &[
            "psql",
            "-h",
            "db",
            "-U",
            "postgres",
            "-tAc",
            "select count(*) from migrated",
        ],
    )
    .await;
    assert_eq!(
        (code, text.trim()),
        (0, "0"),
        "migrate ran before the set was ready: {text}"
    );

    let (code, text) = run(
        &runtime,
        &app,
        &["psql", "-h", "db", "-U", "postgres", "-tAc", "select 1"],
    )
    .await;
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
    let (code, text) = run(
        &runtime,
        &app,
        &[
            "psql",
            "-h",
            "db",
            "-U",
            "postgres",
            "-c",
            "create table kept (n int)",
        ],
    )
    .await;
    assert_eq!(code, 0, "{text}");
    runtime.stop(&app, None).await.unwrap();
    stop_service_set(&runtime, &holder, None).await.unwrap();
    let again = start_service_set(&runtime, &spec)
        .await
        .expect("start the set again");
    assert_eq!(again.services, set.services);
    runtime.start(&app).await.unwrap();
    let (code, text) = run(
        &runtime,
        &app,
        &[
            "psql",
            "-h",
            "db",
            "-U",
            "postgres",
            "-tAc",
            "select count(*) from kept",
        ],
    )
    .await;
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

/// A `db` healthcheck that never passes: failing (`unhealthy`), or still in its start
/// period when the set's time is up (`slow`); or a `migrate` that exits 3 (`migration`).
async fn unhealthy_service_fails_the_start_and_leaves_nothing(socket: &str, tag: &str) {
    let runtime = runtime(socket, tag);
    let engine = runtime.engine().await.unwrap();
    for (case, failing, why) in [
        ("unhealthy", "db", "unhealthy"),
        ("slow", "db", "within the set's 3 s"),
        ("migration", "migrate", "exited with code 3"),
    ] {
        let container = format!("cr-compose-{tag}-{case}");
        let mut spec = db_and_cache(&container, Lifetime::Session);
        let check = |test: &[&str], start_period: Option<Duration>| Healthcheck {
            test: argv(test),
            interval: Some(Duration::from_millis(300)),
            retries: Some(2),
            start_period,
            ..Default::default()
        };
        match case {
            "unhealthy" => spec.services[0].healthcheck = Some(check(&["CMD", "false"], None)),
            "slow" => {
                let never = check(
                    &["CMD-SHELL", "test -e /nothing-here"],
                    Some(Duration::from_secs(600)),
                );
                spec.services[0].healthcheck = Some(never);
                spec.ready_timeout = Duration::from_secs(3);
            }
            _ => spec.services[2].command = Some(argv(&["sh", "-c", "exit 3"])),
        }
        let holder = holder_name(&container);
        let _ = remove_service_set(&engine, &holder).await;
        let err = start_service_set(&runtime, &spec).await.unwrap_err();
        assert_eq!(
            err.code,
            ErrorCode::ServiceNotReady,
            "{case}: {}",
            err.message
        );
        let named = format!("service '{failing}'");
        assert!(err.message.contains(&named), "{case}: {}", err.message);
        assert!(err.message.contains(why), "{case}: {}", err.message);
        assert_eq!(
            set_members(&engine, &holder).await,
            (vec![], vec![]),
            "{case}"
        );
    }
}

async fn reap_orphans_removes_an_inactive_sessions_set(socket: &str, tag: &str) {
    let runtime = runtime(socket, tag);
    let engine = runtime.engine().await.unwrap();
    let container = format!("cr-compose-{tag}");
    let mut spec = db_and_cache(&container, Lifetime::Session);
    spec.app_depends_on.clear();
    spec.services[1].depends_on.clear();
    let holder = holder_name(&container);
    let _ = remove_service_set(&engine, &holder).await;
    let set = start_service_set(&runtime, &spec)
        .await
        .expect("start the set");
    app_container(&runtime, &set, &spec).await;
    let base = runtime.base_dir().to_string_lossy().into_owned();
    let none_active = HashSet::new();
    let reaped = reap_containers(&engine, &base, Some(&none_active), false)
        .await
        .unwrap();
    assert!(reaped.removed.contains(&holder), "{reaped:?}");
    assert_eq!(
        reaped.removed.last(),
        Some(&holder),
        "the holder goes last: {reaped:?}"
    );
    reap_volumes(&engine, runtime.base_dir(), Some(&none_active), false)
        .await
        .unwrap();
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

#[tokio::test(flavor = "multi_thread")]
async fn unhealthy_service_on_dockerd() {
    unhealthy_service_fails_the_start_and_leaves_nothing(DOCKER, "docker-unhealthy").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn unhealthy_service_on_podman() {
    if available(PODMAN) {
        unhealthy_service_fails_the_start_and_leaves_nothing(PODMAN, "podman-unhealthy").await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reap_orphans_on_dockerd() {
    reap_orphans_removes_an_inactive_sessions_set(DOCKER, "docker-reap").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reap_orphans_on_podman() {
    if available(PODMAN) {
        reap_orphans_removes_an_inactive_sessions_set(PODMAN, "podman-reap").await;
    }
}

/// Run by `watchdog_removes_the_set_of_a_killed_owner` in a child process of this test
/// binary: makes a `process` set and its app container, says so, and waits to be killed.
#[tokio::test(flavor = "multi_thread")]
async fn child_makes_a_set_and_waits() {
    let Ok(job) = std::env::var(CHILD_ENV) else {
        return; // only as the watchdog test's child
    };
    let (socket, container) = job.split_once('|').unwrap();
    let runtime = runtime(socket, "watchdog");
    let mut spec = db_and_cache(container, Lifetime::Process);
    spec.app_depends_on.clear();
    spec.services[1].depends_on.clear();
    let set = start_service_set(&runtime, &spec)
        .await
        .expect("start the set");
    app_container(&runtime, &set, &spec).await;
    println!("SET READY");
    tokio::time::sleep(Duration::from_secs(600)).await;
}

async fn watchdog_removes_the_set_of_a_killed_owner(socket: &str, tag: &str) {
    use std::io::{BufRead, BufReader};
    let engine = Engine::connect(&engine_options(socket)).await.unwrap();
    let container = format!("cr-compose-{tag}");
    let holder = holder_name(&container);
    let _ = remove_service_set(&engine, &holder).await;
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_makes_a_set_and_waits", "--nocapture"])
        .env(CHILD_ENV, format!("{socket}|{container}"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let ready = stdout
        .lines()
        .map_while(Result::ok)
        .any(|l| l.contains("SET READY"));
    assert!(ready, "the child made no set");
    let inspected = engine.inspect_container(&holder, &holder).await.unwrap();
    let l = inspected.config.unwrap().labels.unwrap();
    let owner = OwnerIdentity {
        pid: l[labels::OWNER_PID].parse().unwrap(),
        start: l[labels::OWNER_START].clone(),
        boot_id: l[labels::OWNER_BOOT_ID].clone(),
        host: l[labels::OWNER_HOST].clone(),
    };
    assert_eq!(owner.pid, child.id());
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let options = engine_options(socket);
    let removed = tokio::task::spawn_blocking(move || watch_owner(owner, vec![options]))
        .await
        .unwrap();
    assert!(
        removed.contains(&holder) && removed.contains(&container),
        "{removed:?}"
    );
    assert_eq!(set_members(&engine, &holder).await, (vec![], vec![]));
}

#[tokio::test(flavor = "multi_thread")]
async fn watchdog_on_dockerd() {
    watchdog_removes_the_set_of_a_killed_owner(DOCKER, "docker-watchdog").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn watchdog_on_podman() {
    if available(PODMAN) {
        watchdog_removes_the_set_of_a_killed_owner(PODMAN, "podman-watchdog").await;
    }
}
