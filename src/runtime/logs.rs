//! A container's log as lines, decoded exactly as a shell's output is (`OutputDecoder`),
//! delivered as they arrive when following.

use bollard::container::LogOutput;
use bollard::query_parameters::LogsOptionsBuilder;
use chrono::DateTime;
use futures_util::StreamExt;

use crate::engine::{from_bollard, Engine};
use crate::error::Result;
use crate::output::{OutputDecoder, OutputLine, StreamKind};

#[derive(Debug, Clone, Copy, Default)]
pub struct LogsRequest {
    pub follow: bool,
    /// Only entries logged at or after this time (unix milliseconds).
    pub since_ms: Option<i64>,
}

/// Streams the log of `container` to `on_line`; returns when the log ends (with `follow`,
/// when the container's main process exits).
pub async fn stream_logs(
    engine: &Engine,
    container: &str,
    request: LogsRequest,
    mut on_line: impl FnMut(OutputLine),
) -> Result<()> {
    let subject = format!("logs of container '{container}'");
    // The API's `since` has whole seconds; ask for timestamps and filter to the millisecond.
    let mut builder = LogsOptionsBuilder::default()
        .stdout(true)
        .stderr(true)
        .follow(request.follow)
        .timestamps(request.since_ms.is_some());
    if let Some(ms) = request.since_ms {
        builder = builder.since(i32::try_from(ms.div_euclid(1000)).unwrap_or(i32::MAX));
    }
    let mut stream = engine.docker().logs(container, Some(builder.build()));
    let mut decoder = OutputDecoder::new();
    while let Some(frame) = stream.next().await {
        let (kind, bytes) = match frame {
            Ok(LogOutput::StdOut { message }) | Ok(LogOutput::Console { message }) => {
                (StreamKind::Stdout, message)
            }
            Ok(LogOutput::StdErr { message }) => (StreamKind::Stderr, message),
            Ok(LogOutput::StdIn { .. }) => continue,
            Err(err) => return Err(engine.annotate(from_bollard(err, &subject))),
        };
        let payload = match request.since_ms {
            Some(since) => match split_timestamp(&bytes) {
                Some((at, _)) if at < since => continue,
                Some((_, rest)) => rest,
                None => &bytes[..],
            },
            None => &bytes[..],
        };
        decoder.push(kind, payload, &mut on_line);
    }
    decoder.finish(&mut on_line);
    Ok(())
}

/// `2026-11-22T17:26:00.571234620Z payload` → (unix ms, payload).
fn split_timestamp(frame: &[u8]) -> Option<(i64, &[u8])> {
    let space = frame.iter().position(|&b| b == b' ')?;
    let stamp = std::str::from_utf8(&frame[..space]).ok()?;
    let at = DateTime::parse_from_rfc3339(stamp).ok()?.timestamp_millis();
    Some((at, &frame[space + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_split_off() {
        let (at, rest) = split_timestamp(b"2026-11-22T17:00:00.123456789Z hello\n").unwrap();
        assert_eq!(at, 1_795_366_800_123);
        assert_eq!(rest, b"hello\n");
        assert!(split_timestamp(b"no-stamp here").is_none());
    }
}
