//! Tests of Apple's container runtime (`apple_runtime.rs`).

use super::*;

#[test]
fn cli_errors_map_to_codes() {
    assert_eq!(
        classify("Error: notFound: \"container ci-1 not found\""),
        ErrorCode::ContainerNotFound
    );
    assert_eq!(
        classify("Error: image reference registry.example/x not found"),
        ErrorCode::ImageNotFound
    );
    assert_eq!(
        classify("container ci-1 is not running"),
        ErrorCode::ContainerNotRunning
    );
    assert_eq!(
        classify("container with id ci-1 already exists"),
        ErrorCode::Eexist
    );
}

#[tokio::test]
async fn a_missing_cli_is_engine_unavailable() {
    let runtime = AppleContainerRuntime::new(AppleRuntimeOptions {
        program: Some("/nonexistent/container".into()),
        ..Default::default()
    });
    let err = runtime.inspect("x").await.unwrap_err();
    assert_eq!(err.code, ErrorCode::EngineUnavailable);
    assert!(err.message.contains("/nonexistent/container"));
}
