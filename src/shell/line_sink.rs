//! Where a command's output goes as it arrives: decoded into lines, each handed to
//! `onOutput`, written to the command log, and kept for `ShellResult.output` — only the
//! last lines within the shell's limits, so a command that prints millions of lines costs
//! bounded memory (the log file keeps everything).

use std::collections::VecDeque;

use super::command_log::{CommandLog, PendingLog};
use crate::output::{OutputDecoder, OutputLine, StreamKind};

/// How much of a command's output `ShellResult.output` keeps (its tail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits {
            max_lines: 100_000,
            max_bytes: 16 << 20,
        }
    }
}

pub struct LineSink<F> {
    decoder: OutputDecoder,
    log: PendingLog,
    on_output: F,
    kept: VecDeque<OutputLine>,
    kept_bytes: usize,
    limits: OutputLimits,
    omitted: u64,
}

impl<F: FnMut(&OutputLine) + Send> LineSink<F> {
    pub fn new(log: PendingLog, on_output: F, limits: OutputLimits) -> Self {
        LineSink {
            decoder: OutputDecoder::new(),
            log,
            on_output,
            kept: VecDeque::new(),
            kept_bytes: 0,
            limits,
            omitted: 0,
        }
    }

    pub async fn push(&mut self, kind: StreamKind, bytes: &[u8]) {
        let mut lines = Vec::new();
        self.decoder.push(kind, bytes, |line| lines.push(line));
        self.deliver(lines).await;
    }

    /// Flushes the last lines that had no newline.
    pub async fn finish(&mut self) {
        let mut lines = Vec::new();
        self.decoder.finish(|line| lines.push(line));
        self.deliver(lines).await;
    }

    pub async fn line(&mut self, line: OutputLine) {
        self.deliver(vec![line]).await;
    }

    async fn deliver(&mut self, lines: Vec<OutputLine>) {
        if lines.is_empty() {
            return;
        }
        let mut log = self.log.get().await;
        for line in &lines {
            (self.on_output)(line);
            if let Some(log) = log.as_mut() {
                log.line(line);
            }
        }
        if let Some(log) = log {
            log.flush();
        }
        for line in lines {
            self.keep(line);
        }
    }

    fn keep(&mut self, line: OutputLine) {
        self.kept_bytes += line.text.len();
        self.kept.push_back(line);
        while self.kept.len() > self.limits.max_lines
            || (self.kept_bytes > self.limits.max_bytes && self.kept.len() > 1)
        {
            if let Some(old) = self.kept.pop_front() {
                self.kept_bytes -= old.text.len();
                self.omitted += 1;
            }
        }
    }

    /// The kept lines, how many were left out before them, and the log.
    pub async fn into_parts(self) -> (Vec<OutputLine>, u64, Option<CommandLog>) {
        (self.kept.into(), self.omitted, self.log.into_log().await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_tail_within_the_limits() {
        let limits = OutputLimits {
            max_lines: 3,
            max_bytes: 1 << 20,
        };
        let mut seen = 0;
        let mut sink = LineSink::new(PendingLog::none(), |_: &OutputLine| seen += 1, limits);
        sink.push(StreamKind::Stdout, b"1\n2\n3\n4\n5").await;
        sink.finish().await;
        let (kept, omitted, _) = sink.into_parts().await;
        let texts: Vec<_> = kept.iter().map(|l| l.text.as_str()).collect();
        assert_eq!((texts, omitted), (vec!["3", "4", "5"], 2));
        assert_eq!(seen, 5);

        let limits = OutputLimits {
            max_lines: 100,
            max_bytes: 4,
        };
        let mut sink = LineSink::new(PendingLog::none(), |_: &OutputLine| {}, limits);
        sink.push(StreamKind::Stderr, b"aa\nbb\ncc\n").await;
        let (kept, omitted, _) = sink.into_parts().await;
        assert_eq!((kept.len(), omitted), (2, 1));
    }
}
