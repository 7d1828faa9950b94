//! `run_buffered` against the machine's engine, on a container a `DockerRuntime` made.

use super::*;
use crate::container_runtime::{ContainerConfig, ContainerRuntime, DockerRuntime, RuntimeOptions};
use crate::engine::EngineOptions;

/// Against the machine's engine: 3 MB of output, 1000 bytes kept.
#[tokio::test(flavor = "multi_thread")]
async fn buffered_output_is_kept_up_to_the_limit() {
    let runtime = DockerRuntime::new(RuntimeOptions {
        image: Some("container-isolation-test:debian".into()),
        base_dir: Some(
            std::env::temp_dir()
                .join("ci-exec-limit")
                .to_string_lossy()
                .into(),
        ),
        ..Default::default()
    });
    let engine = Engine::connect(&EngineOptions::default())
        .await
        .expect("the machine's engine (npm test provisions it)");
    let config = ContainerConfig {
        working_directory: "/".into(),
        ..Default::default()
    };
    let id = runtime.create(config).await.unwrap();
    runtime.start(&id).await.unwrap();
    let request = ExecRequest {
        command: ["sh", "-c", "head -c 3000000 /dev/zero; echo err >&2"]
            .map(str::to_string)
            .to_vec(),
        output_limit: Some(1000),
        ..Default::default()
    };
    let out = run_buffered(&engine, &id, request).await;
    runtime.remove(&id).await.unwrap();
    let out = out.unwrap();
    assert_eq!(
        (out.stdout.len(), out.stderr.as_slice()),
        (1000, &b"err\n"[..])
    );
}
