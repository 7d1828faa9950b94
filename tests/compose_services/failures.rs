//! A set that does not come up leaves nothing, and `reapOrphans` removes the set of a
//! session that is not active, its holder last.

use std::collections::HashSet;
use std::time::Duration;

use container_isolation::compose_services::{holder_name, remove_service_set, start_service_set};
use container_isolation::container_runtime::Healthcheck;
use container_isolation::error::ErrorCode;
use container_isolation::reaper::{reap_containers, reap_volumes};
use container_isolation::runtime::Lifetime;

use crate::support::*;

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
