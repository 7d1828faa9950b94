//! The one place where the engine's multiplexed frames become stdout and stderr bytes.
//!
//! bollard reports bytes that do not start with a frame header as `Console`. Outside a TTY
//! that happens when an engine writes a byte outside any frame: Podman 4.3 replays an
//! attach's log history with each frame's length one short and the line's `\n` written
//! after it. Such a fragment belongs to the stream of the frame before it, never to
//! stdout by default, or a stderr line would be cut and its end reported as stdout.

use bollard::container::LogOutput;
use bytes::Bytes;

use crate::output::StreamKind;

#[derive(Debug)]
pub struct FrameDemux {
    last: StreamKind,
}

impl Default for FrameDemux {
    fn default() -> Self {
        FrameDemux {
            last: StreamKind::Stdout,
        }
    }
}

impl FrameDemux {
    /// The stream and bytes of one frame; `None` for what a command never writes (stdin).
    pub fn split(&mut self, frame: LogOutput) -> Option<(StreamKind, Bytes)> {
        let (kind, message) = match frame {
            LogOutput::StdOut { message } => (StreamKind::Stdout, message),
            LogOutput::StdErr { message } => (StreamKind::Stderr, message),
            LogOutput::Console { message } => (self.last, message),
            LogOutput::StdIn { .. } => return None,
        };
        self.last = kind;
        Some((kind, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stray_fragment_stays_on_the_stream_before_it() {
        let mut demux = FrameDemux::default();
        let frames = [
            LogOutput::StdOut {
                message: Bytes::from_static(b"o1"),
            },
            LogOutput::Console {
                message: Bytes::from_static(b"\n"),
            },
            LogOutput::StdErr {
                message: Bytes::from_static(b"e1"),
            },
            LogOutput::Console {
                message: Bytes::from_static(b"\n"),
            },
            LogOutput::StdIn {
                message: Bytes::from_static(b"x"),
            },
        ];
        let kinds: Vec<_> = frames
            .into_iter()
            .filter_map(|f| demux.split(f))
            .map(|(kind, bytes)| (kind, bytes.to_vec()))
            .collect();
        assert_eq!(
            kinds,
            [
                (StreamKind::Stdout, b"o1".to_vec()),
                (StreamKind::Stdout, b"\n".to_vec()),
                (StreamKind::Stderr, b"e1".to_vec()),
                (StreamKind::Stderr, b"\n".to_vec()),
            ]
        );
    }

    #[test]
    fn a_tty_stream_is_stdout() {
        let mut demux = FrameDemux::default();
        let (kind, _) = demux
            .split(LogOutput::Console {
                message: Bytes::from_static(b"all of it\n"),
            })
            .unwrap();
        assert_eq!(kind, StreamKind::Stdout);
    }
}
