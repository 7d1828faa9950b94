//! The agent uploaded into a created container (as on an engine that cannot see this
//! machine's files) instead of bind-mounted: found there by its label and answering, against
//! the real engine (provisioned by `npm test`).

use container_isolation::agent::{agent_access, AgentAccess};
use container_isolation::container_runtime::{
    ContainerConfig, ContainerRuntime, DockerRuntime, RuntimeOptions,
};
use container_isolation::runtime::exec::ExecRequest;
use container_isolation::runtime::labels;
use container_isolation::runtime::{Lifetime, AGENT_MOUNT};

const IMAGE: &str = "container-isolation-test:debian";

#[tokio::test(flavor = "multi_thread")]
async fn an_uploaded_agent_is_found_by_its_label_and_answers() {
    let base = std::env::temp_dir().join(format!("ci-cargo-upload-{}", std::process::id()));
    let runtime = DockerRuntime::new(RuntimeOptions {
        base_dir: Some(base.to_string_lossy().into()),
        agent: true,
        ..Default::default()
    })
    .with_agent_upload();
    let id = runtime
        .create(ContainerConfig {
            working_directory: "/".into(),
            image: Some(IMAGE.into()),
            lifetime: Lifetime::Process,
            ..Default::default()
        })
        .await
        .expect("create a sandbox from the Debian test image (run `npm test` to provision it)");
    let engine = runtime.engine().await.unwrap();
    let inspected = engine.inspect_container(&id, &id).await.unwrap();
    let mounted = inspected
        .mounts
        .unwrap_or_default()
        .iter()
        .any(|m| m.destination.as_deref() == Some(AGENT_MOUNT));
    let label = inspected
        .config
        .and_then(|c| c.labels)
        .and_then(|l| l.get(labels::AGENT_UPLOAD).cloned());
    runtime.start(&id).await.unwrap();
    let access = agent_access(&engine, &id).await;
    let answered = runtime
        .exec(
            &id,
            ExecRequest {
                command: vec![
                    "sh".into(),
                    "-c".into(),
                    "echo hi; stat -c %a:%u /.container-isolation-agent".into(),
                ],
                ..Default::default()
            },
        )
        .await;
    runtime.remove(&id).await.unwrap();
    let _ = std::fs::remove_dir_all(&base);

    assert!(!mounted, "no bind mount of the agent");
    assert_eq!(
        label.map(|l| l.len()),
        Some(64),
        "the upload's sha-256 labels the container"
    );
    match access.unwrap() {
        AgentAccess::Agent { path, .. } => assert_eq!(path, AGENT_MOUNT),
        other => panic!("the agent should run: {other:?}"),
    }
    let out = answered.unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hi\n755:0\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_egress_relay_runs_in_an_uploaded_agent() {
    let base = std::env::temp_dir().join(format!("ci-cargo-upload-relay-{}", std::process::id()));
    let runtime = DockerRuntime::new(RuntimeOptions {
        base_dir: Some(base.to_string_lossy().into()),
        ..Default::default()
    })
    .with_agent_upload();
    let id = runtime
        .create(ContainerConfig {
            working_directory: "/".into(),
            image: Some(IMAGE.into()),
            lifetime: Lifetime::Process,
            egress: Some(container_isolation::egress::Egress::default()),
            ..Default::default()
        })
        .await
        .unwrap();
    let started = runtime.start(&id).await;
    let proxy = runtime
        .exec(
            &id,
            ExecRequest {
                command: vec!["sh".into(), "-c".into(), "echo $HTTP_PROXY".into()],
                ..Default::default()
            },
        )
        .await;
    runtime.remove(&id).await.unwrap();
    let _ = std::fs::remove_dir_all(&base);
    started.expect("the relay starts through the uploaded agent");
    assert!(String::from_utf8_lossy(&proxy.unwrap().stdout).starts_with("http://"));
}
