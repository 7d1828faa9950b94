//! A container's log as lines, decoded exactly as a shell's output is (`OutputDecoder`),
//! delivered as they arrive when following.

use bollard::container::LogOutput;
use bollard::query_parameters::LogsOptionsBuilder;
use chrono::DateTime;
use futures_util::StreamExt;

use crate::engine::{from_bollard, Engine, FrameDemux};
use crate::error::Result;
use crate::output::{OutputDecoder, OutputLine};

#[derive(Debug, Clone, Copy, Default)]
pub struct LogsRequest {
    pub follow: bool,
    /// Only entries logged at or after this time (unix milliseconds).
    pub since_ms: Option<i64>,
}

/// Streams the log of `container` to `on_line`; returns when the log ends (with `follow`,
/// when the container's main process exits).
///
/// Always the logs endpoint: Podman's (4.3) polls its log file every 250 ms, but attaching
/// with the history replayed, which is faster there, frames replayed lines one byte short
/// and races the replay against the live stream (lines lost, doubled, or on the wrong
/// stream).
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
    let stream = engine.docker().logs(container, Some(builder.build()));
    decode_frames(
        engine,
        &subject,
        Box::pin(stream),
        request.since_ms,
        &mut on_line,
    )
    .await
}

/// Decodes multiplexed frames into lines; with `since_ms`, frames carry a timestamp prefix
/// and older ones are dropped.
async fn decode_frames(
    engine: &Engine,
    subject: &str,
    mut stream: std::pin::Pin<
        Box<dyn futures_util::Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send + '_>,
    >,
    since_ms: Option<i64>,
    mut on_line: impl FnMut(OutputLine),
) -> Result<()> {
    let mut decoder = OutputDecoder::new();
    let mut demux = FrameDemux::default();
    while let Some(frame) = stream.next().await {
        let frame = frame.map_err(|err| engine.annotate(from_bollard(err, subject)))?;
        let Some((kind, bytes)) = demux.split(frame) else {
            continue;
        };
        let payload = match since_ms {
            Some(since) => match split_timestamp(&bytes) {
                Some((stamp, _)) if stamp.latest_ms() < since => continue,
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

/// When a log entry was written, to the precision the engine gives: Docker stamps
/// nanoseconds, Podman whole seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    ms: i64,
    whole_seconds: bool,
}

impl Stamp {
    /// The latest moment the entry can have been written.
    fn latest_ms(self) -> i64 {
        if self.whole_seconds {
            self.ms + 999
        } else {
            self.ms
        }
    }
}

/// `2026-11-22T17:26:00.571234620Z payload` → (stamp, payload).
fn split_timestamp(frame: &[u8]) -> Option<(Stamp, &[u8])> {
    let space = frame.iter().position(|&b| b == b' ')?;
    let text = std::str::from_utf8(&frame[..space]).ok()?;
    let at = DateTime::parse_from_rfc3339(text).ok()?;
    let stamp = Stamp {
        ms: at.timestamp_millis(),
        whole_seconds: !text.contains('.'),
    };
    Some((stamp, &frame[space + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_split_off() {
        let (at, rest) = split_timestamp(b"2026-11-22T17:00:00.123456789Z hello\n").unwrap();
        assert_eq!(at.latest_ms(), 1_795_366_800_123);
        assert_eq!(rest, b"hello\n");
        // Podman's whole seconds stand for the whole second.
        let (at, _) = split_timestamp(b"2026-11-22T17:00:00Z x").unwrap();
        assert_eq!(at.latest_ms(), 1_795_366_800_999);
        assert!(split_timestamp(b"no-stamp here").is_none());
    }
}
