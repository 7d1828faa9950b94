//! What the compose set tests share: the engines, a runtime per test, the set they start
//! (`db`, `cache`, `migrate`), the app container joined to it, exec, and the set's
//! containers and volumes as the engine lists them.

use std::collections::HashMap;
use std::time::Duration;

use container_isolation::compose_services::{
    Condition, Dependency, ServiceSet, ServiceSetSpec, ServiceSpec, VolumeMount,
};
use container_isolation::container_runtime::{
    ContainerConfig, ContainerRuntime, DockerRuntime, Healthcheck, RuntimeOptions,
};
use container_isolation::engine::{Engine, EngineOptions, PullPolicy};
use container_isolation::runtime::exec::ExecRequest;
use container_isolation::runtime::{labels, Lifetime, ResourceLimits};
use container_isolation::workspace_volume::{labelled_volumes, remove_volume};

pub const POSTGRES: &str = "container-isolation-test:postgres";
pub const REDIS: &str = "container-isolation-test:redis";
pub const DOCKER: &str = "/var/run/docker.sock";
pub const PODMAN: &str = "/run/podman/podman.sock";

pub fn engine_options(socket: &str) -> EngineOptions {
    EngineOptions {
        socket_path: Some(socket.to_string()),
        ..Default::default()
    }
}

/// Podman's service may be absent (`PROVISION_PODMAN=0`): its tests then say so and pass.
pub fn available(socket: &str) -> bool {
    let there = std::path::Path::new(socket).exists();
    if !there {
        eprintln!("{socket} is absent (PROVISION_PODMAN=0?): this engine's test does not run");
    }
    there
}

pub fn runtime(socket: &str, base: &str) -> DockerRuntime {
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

pub fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

pub fn healthy(service: &str) -> Dependency {
    Dependency {
        service: service.into(),
        condition: Condition::Healthy,
    }
}

/// `db` (healthcheck `pg_isready`, its data in a named volume), `cache` and `migrate` (a
/// one-off `psql`), which wait for `db` to be healthy; the app waits for all three, and for
/// `migrate` to complete successfully.
pub fn db_and_cache(container: &str, lifetime: Lifetime) -> ServiceSetSpec {
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
pub async fn app_container(
    runtime: &DockerRuntime,
    set: &ServiceSet,
    spec: &ServiceSetSpec,
) -> String {
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

/// `sql` run by psql in `container` against the set's `db` (unaligned, tuples only for a
/// query, `-c` for a statement): its exit code and output.
pub async fn psql(
    runtime: &DockerRuntime,
    container: &str,
    flag: &str,
    sql: &str,
) -> (i64, String) {
    let command = ["psql", "-h", "db", "-U", "postgres", flag, sql];
    run(runtime, container, &command).await
}

pub async fn run(runtime: &DockerRuntime, container: &str, command: &[&str]) -> (i64, String) {
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

pub async fn set_members(engine: &Engine, holder: &str) -> (Vec<String>, Vec<String>) {
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

/// Removes what an earlier, killed run of a test left of its set: the members, then the
/// volumes by name (one the engine made itself at a member's create carries no label).
pub async fn clear_set(engine: &Engine, container: &str, volumes: &[&str]) {
    let _ = container_isolation::compose_services::remove_service_set(
        engine,
        &container_isolation::compose_services::holder_name(container),
    )
    .await;
    for volume in volumes {
        let name = container_isolation::compose_services::volume_name(container, volume);
        let _ = remove_volume(engine, &name).await;
    }
}
