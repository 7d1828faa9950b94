//! A session Pod's log: Kubernetes keeps one per container, so every line comes as
//! `stdout`, decoded as the engines' logs are.

use futures_util::AsyncBufReadExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::LogParams;
use kube::Api;

use super::api_errors::from_kube;
use super::session_pod::CONTAINER;
use crate::error::{Error, ErrorCode, Result};
use crate::output::{OutputDecoder, OutputLine, StreamKind};
use crate::runtime::LogsRequest;

/// Each line of Pod `id`'s log since `request.since_ms` to `on_line`, following it while
/// the container runs when `request.follow`.
pub async fn follow_logs(
    pods: &Api<Pod>,
    id: &str,
    request: LogsRequest,
    mut on_line: impl FnMut(OutputLine) + Send,
) -> Result<()> {
    let since_time = request
        .since_ms
        .and_then(|ms| k8s_openapi::jiff::Timestamp::from_millisecond(ms).ok());
    let params = LogParams {
        container: Some(CONTAINER.to_string()),
        follow: request.follow,
        since_time,
        ..Default::default()
    };
    let subject = format!("logs of container '{id}'");
    let mut reader = pods
        .log_stream(id, &params)
        .await
        .map_err(|err| from_kube(err, &subject, "get pods/log"))?;
    let mut decoder = OutputDecoder::new();
    let mut chunk = Vec::new();
    loop {
        chunk.clear();
        let read = reader
            .read_until(b'\n', &mut chunk)
            .await
            .map_err(|err| Error::new(ErrorCode::EngineUnavailable, format!("{subject}: {err}")))?;
        if read == 0 {
            break;
        }
        decoder.push(StreamKind::Stdout, &chunk, &mut on_line);
    }
    decoder.finish(&mut on_line);
    Ok(())
}
