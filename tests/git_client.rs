//! `GitClient` against the real engine (provisioned by `npm test`): a git command that
//! hangs is killed inside the container at its time limit, on the agent path and on the
//! engine path, and the state is unknown rather than late.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use container_isolation::container_runtime::{
    ContainerConfig, ContainerRuntime, DockerRuntime, RuntimeOptions,
};
use container_isolation::engine::{Engine, EngineOptions};
use container_isolation::git::{GitClient, GitClientOptions};
use container_isolation::runtime::exec::ExecRequest;
use container_isolation::runtime::Lifetime;

const IMAGE: &str = "container-isolation-test:debian";

async fn sh(engine: &Engine, id: &str, script: &str) -> String {
    let request = ExecRequest {
        command: vec!["sh".into(), "-c".into(), script.into()],
        ..Default::default()
    };
    let out = container_isolation::runtime::run_buffered(engine, id, request)
        .await
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `core.fsmonitor` makes `git status` run this hook, which never answers.
fn hanging_status_env() -> BTreeMap<String, String> {
    [
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
        ("GIT_CONFIG_VALUE_0", "sleep 307"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hanging_git_is_killed_at_its_time_limit() {
    let base_dir = std::env::temp_dir().join("ci-cargo-git-client");
    let runtime = DockerRuntime::new(RuntimeOptions {
        base_dir: Some(base_dir.to_string_lossy().into()),
        ..Default::default()
    });
    let id = runtime
        .create(ContainerConfig {
            working_directory: "/".into(),
            image: Some(IMAGE.into()),
            lifetime: Lifetime::Process,
            ..Default::default()
        })
        .await
        .expect("create a sandbox from the Debian test image (run `npm test` to provision it)");
    runtime.start(&id).await.unwrap();
    let engine = Engine::connect(&EngineOptions::default()).await.unwrap();
    sh(
        &engine,
        &id,
        "mkdir /r && cd /r && git init -q && echo a > a && git add a",
    )
    .await;

    for agent in [true, false] {
        let options = GitClientOptions {
            container: id.clone(),
            cwd: "/r".into(),
            user: None,
            env: BTreeMap::new(),
            engine: EngineOptions::default(),
            agent,
        };
        let healthy = GitClient::new(options.clone()).unwrap();
        let state = healthy.state().await.expect("a state for /r");
        assert_eq!((state.repo_root.as_str(), state.staged_count), ("/r", 1));

        let hanging = GitClient::new(GitClientOptions {
            env: hanging_status_env(),
            ..options
        })
        .unwrap()
        .with_timeout(Duration::from_secs(2));
        let started = Instant::now();
        assert_eq!(hanging.state().await, None, "agent: {agent}");
        let took = started.elapsed();
        assert!(
            took >= Duration::from_secs(2),
            "agent {agent}: ended before the limit"
        );
        assert!(took < Duration::from_secs(15), "agent {agent}: {took:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let left = sh(&engine, &id, "ps -eo args | grep -c '^sleep 307' || true").await;
        assert_eq!(left.trim(), "0", "agent: {agent}");
    }
    runtime.remove(&id).await.unwrap();
}
