//! The watchdog removes the set of an owner killed with SIGKILL: a child process of this
//! test binary makes a `process` set and its app container, and is killed.

use std::time::Duration;

use container_isolation::compose_services::{holder_name, remove_service_set, start_service_set};
use container_isolation::engine::Engine;
use container_isolation::reaper::watch_owner;
use container_isolation::runtime::{labels, Lifetime, OwnerIdentity};

use crate::support::*;

/// The child process of the watchdog test: its engine socket and session container name.
const CHILD_ENV: &str = "CI_COMPOSE_SERVICES_CHILD";

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
        .args([
            "--exact",
            "watchdog::child_makes_a_set_and_waits",
            "--nocapture",
        ])
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
