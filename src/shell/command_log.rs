//! The host-side log of one command, at
//! `${logDir}/threads/${threadId}/tools/${toolRequestId}/bashCommand.log`: `$ <command>`,
//! a `stdout:`/`stderr:` header whenever the stream changes, the lines, and last
//! `exit code N` or `terminated by signal SIGX`.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tokio::task::JoinHandle;

use crate::error::{Error, ErrorCode, Result};
use crate::output::{OutputLine, StreamKind};

/// Writes go to the page cache of a local file: a few microseconds each, done in place
/// (a hop to a blocking thread per write cost more than the write).
pub struct CommandLog {
    path: PathBuf,
    writer: BufWriter<std::fs::File>,
    stream: Option<StreamKind>,
}

/// A log being created on a blocking thread while the command starts (its directories are
/// new for every command); awaited when the first line or the end must be written.
pub struct PendingLog {
    creating: Option<JoinHandle<Option<CommandLog>>>,
    log: Option<CommandLog>,
}

impl PendingLog {
    /// Starts creating the log at `path`; a log that cannot be created is no log (logging
    /// is best effort).
    pub fn start(path: PathBuf, command: String) -> PendingLog {
        let creating = tokio::task::spawn_blocking(move || CommandLog::create(path, &command).ok());
        PendingLog {
            creating: Some(creating),
            log: None,
        }
    }

    /// No log at all.
    #[cfg(test)]
    pub fn none() -> PendingLog {
        PendingLog {
            creating: None,
            log: None,
        }
    }

    pub async fn get(&mut self) -> Option<&mut CommandLog> {
        if let Some(creating) = self.creating.take() {
            self.log = creating.await.ok().flatten();
        }
        self.log.as_mut()
    }

    pub async fn into_log(mut self) -> Option<CommandLog> {
        self.get().await;
        self.log
    }
}

/// Ids become directory names: they must be one plain path segment.
pub fn validate_segment(what: &str, value: &str) -> Result<()> {
    let bad = value.is_empty()
        || value == "."
        || value == ".."
        || value.contains(['/', '\\', '\0'])
        || value.len() > 255;
    if bad {
        return Err(Error::invalid_argument(format!(
            "{what} '{value}' must be a non-empty file name without '/', '\\\\' or NUL, and not '.' or '..'"
        )));
    }
    Ok(())
}

pub fn log_path(log_dir: &Path, thread_id: &str, tool_request_id: &str) -> PathBuf {
    log_dir
        .join("threads")
        .join(thread_id)
        .join("tools")
        .join(tool_request_id)
        .join("bashCommand.log")
}

impl CommandLog {
    pub fn create(path: PathBuf, command: &str) -> Result<CommandLog> {
        let io_error = |err: std::io::Error| {
            Error::new(
                if err.kind() == std::io::ErrorKind::PermissionDenied {
                    ErrorCode::Eacces
                } else {
                    ErrorCode::Enoent
                },
                format!("command log {}: {err}", path.display()),
            )
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io_error)?;
        }
        let file = std::fs::File::create(&path).map_err(io_error)?;
        let mut log = CommandLog {
            path: path.clone(),
            writer: BufWriter::new(file),
            stream: None,
        };
        log.write(&format!("$ {command}\n"));
        Ok(log)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn line(&mut self, line: &OutputLine) {
        if self.stream != Some(line.stream) {
            self.stream = Some(line.stream);
            self.write(&format!("{}:\n", line.stream.as_str()));
        }
        self.write(&line.text);
        self.write("\n");
    }

    /// Makes what was written so far visible to readers of the file.
    pub fn flush(&mut self) {
        let _ = self.writer.flush();
    }

    pub fn finish(mut self, exit_code: i64, signal: Option<&str>) {
        let last = match signal {
            Some(signal) => format!("terminated by signal {signal}\n"),
            None => format!("exit code {exit_code}\n"),
        };
        self.write(&last);
        self.flush();
    }

    /// Logging is best effort: a full disk must not fail the command itself.
    fn write(&mut self, text: &str) {
        let _ = self.writer.write_all(text.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::OutputLine;

    #[test]
    fn writes_headers_when_the_stream_changes() {
        let dir = std::env::temp_dir().join(format!("ci-log-{}", uuid::Uuid::new_v4()));
        let path = log_path(&dir, "t1", "req1");
        let mut log = CommandLog::create(path.clone(), "echo a; echo b >&2").unwrap();
        for (stream, text) in [
            (StreamKind::Stdout, "a"),
            (StreamKind::Stdout, "a2"),
            (StreamKind::Stderr, "b"),
            (StreamKind::Stdout, "c"),
        ] {
            log.line(&OutputLine {
                stream,
                text: text.into(),
            });
        }
        log.finish(3, None);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "$ echo a; echo b >&2\nstdout:\na\na2\nstderr:\nb\nstdout:\nc\nexit code 3\n"
        );
        assert!(path.ends_with("threads/t1/tools/req1/bashCommand.log"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn ids_must_be_single_segments() {
        for bad in ["", ".", "..", "a/b", "../x", "a\\b"] {
            assert!(validate_segment("threadId", bad).is_err(), "{bad}");
        }
        assert!(validate_segment("threadId", "toolu_01AbC-9").is_ok());
    }
}
