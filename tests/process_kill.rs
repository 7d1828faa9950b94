//! Killing an exec's whole tree, by both paths, against the real engine (provisioned by
//! `npm test`): from the host by cgroup and token, and from inside the container.

use std::time::Duration;

use container_isolation::container_runtime::{
    ContainerConfig, ContainerRuntime, DockerRuntime, RuntimeOptions,
};
use container_isolation::engine::{Engine, EngineOptions};
use container_isolation::runtime::exec::{self, ExecRequest};
use container_isolation::runtime::process_kill::{signal_exec_tree, signal_from_container, Signal};

const IMAGE: &str = "container-isolation-test:debian";

async fn sandbox(runtime: &DockerRuntime) -> String {
    let id = runtime
        .create(ContainerConfig {
            working_directory: "/".into(),
            image: Some(IMAGE.into()),
            lifetime: container_isolation::runtime::Lifetime::Process,
            ..Default::default()
        })
        .await
        .expect("create a sandbox from the Debian test image (run `npm test` to provision it)");
    runtime.start(&id).await.unwrap();
    id
}

async fn ps(engine: &Engine, id: &str) -> String {
    let out = container_isolation::runtime::run_buffered(
        engine,
        id,
        ExecRequest {
            command: vec!["ps".into(), "-eo".into(), "args".into()],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

async fn start_tree(engine: &Engine, id: &str) -> exec::StartedExec {
    let started = exec::start(
        engine,
        id,
        &ExecRequest {
            command: vec![
                "bash".into(),
                "-c".into(),
                "sleep 401 & setsid sleep 402 & sleep 403; wait".into(),
            ],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = ps(engine, id).await;
    for s in ["sleep 401", "sleep 402", "sleep 403"] {
        assert!(before.contains(s), "{s} should run: {before}");
    }
    started
}

fn assert_gone(after: &str) {
    for s in ["sleep 401", "sleep 402", "sleep 403"] {
        assert!(!after.contains(s), "{s} survived: {after}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn kills_the_whole_tree_from_inside_the_container() {
    let runtime = DockerRuntime::new(RuntimeOptions {
        base_dir: Some(
            std::env::temp_dir()
                .join("ci-cargo-kill-in")
                .to_string_lossy()
                .into(),
        ),
        ..Default::default()
    });
    let engine = Engine::connect(&EngineOptions::default()).await.unwrap();
    let id = sandbox(&runtime).await;
    let started = start_tree(&engine, &id).await;
    signal_from_container(&engine, &id, &started.token, Signal::Kill)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_gone(&ps(&engine, &id).await);
    runtime.remove(&id).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn kills_the_whole_tree_from_the_host() {
    let runtime = DockerRuntime::new(RuntimeOptions {
        base_dir: Some(
            std::env::temp_dir()
                .join("ci-cargo-kill-host")
                .to_string_lossy()
                .into(),
        ),
        ..Default::default()
    });
    let engine = Engine::connect(&EngineOptions::default()).await.unwrap();
    assert!(engine.is_local());
    let id = sandbox(&runtime).await;
    let started = start_tree(&engine, &id).await;
    signal_exec_tree(&engine, &id, &started.exec_id, &started.token, Signal::Term)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_gone(&ps(&engine, &id).await);
    runtime.remove(&id).await.unwrap();
}
