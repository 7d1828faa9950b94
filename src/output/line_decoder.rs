//! Streaming bytes → lines: split on `\n` across chunk boundaries, decode each complete line
//! as UTF-8 (invalid bytes replaced), strip ANSI escapes, drop blank lines.
//!
//! Splitting happens on bytes before decoding: `\n` (0x0A) never occurs inside a multi-byte
//! UTF-8 sequence, so a character split across chunks is always whole by the time its line
//! is decoded.

use super::output_line::{OutputLine, StreamKind};

/// A line longer than this without a newline is emitted in pieces, so that output with no
/// newlines cannot grow the buffer without bound.
const MAX_PENDING: usize = 1 << 20;

#[derive(Debug)]
pub struct LineDecoder {
    pending: Vec<u8>,
    /// `MAX_PENDING` but in tests.
    limit: usize,
}

impl Default for LineDecoder {
    fn default() -> Self {
        Self {
            pending: Vec::new(),
            limit: MAX_PENDING,
        }
    }
}

impl LineDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that cuts an endless line every `limit` bytes (at least 4, the longest
    /// UTF-8 sequence).
    #[cfg(test)]
    fn with_limit(limit: usize) -> Self {
        assert!(limit >= 4);
        Self {
            pending: Vec::new(),
            limit,
        }
    }

    /// Feeds a chunk; calls `emit` for every complete, non-blank line. A line is cut
    /// wherever it first passes `limit` bytes, whether or not its end is in the same chunk,
    /// so that the lines do not depend on how the bytes arrive.
    pub fn push(&mut self, chunk: &[u8], mut emit: impl FnMut(String)) {
        let mut rest = chunk;
        loop {
            let end = rest.iter().position(|&b| b == b'\n');
            let mut part = &rest[..end.unwrap_or(rest.len())];
            while !part.is_empty() {
                let room = (self.limit + 1).saturating_sub(self.pending.len());
                let (taken, left) = part.split_at(room.min(part.len()));
                self.pending.extend_from_slice(taken);
                part = left;
                if self.pending.len() > self.limit {
                    let cut = utf8_boundary(&self.pending, self.limit);
                    let head: Vec<u8> = self.pending.drain(..cut).collect();
                    emit_line(&head, &mut emit);
                }
            }
            let Some(end) = end else { break };
            let line = std::mem::take(&mut self.pending);
            emit_line(&line, &mut emit);
            rest = &rest[end + 1..];
        }
    }

    /// Flushes a last line that had no trailing newline.
    pub fn finish(&mut self, mut emit: impl FnMut(String)) {
        let line = std::mem::take(&mut self.pending);
        emit_line(&line, &mut emit);
    }
}

/// A pair of decoders, one per stream, emitting tagged lines.
#[derive(Debug, Default)]
pub struct OutputDecoder {
    stdout: LineDecoder,
    stderr: LineDecoder,
}

impl OutputDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, stream: StreamKind, chunk: &[u8], mut emit: impl FnMut(OutputLine)) {
        let decoder = match stream {
            StreamKind::Stdout => &mut self.stdout,
            StreamKind::Stderr => &mut self.stderr,
        };
        decoder.push(chunk, |text| emit(OutputLine { stream, text }));
    }

    pub fn finish(&mut self, mut emit: impl FnMut(OutputLine)) {
        self.stdout.finish(|text| {
            emit(OutputLine {
                stream: StreamKind::Stdout,
                text,
            })
        });
        self.stderr.finish(|text| {
            emit(OutputLine {
                stream: StreamKind::Stderr,
                text,
            })
        });
    }
}

fn emit_line(bytes: &[u8], emit: &mut impl FnMut(String)) {
    let decoded = String::from_utf8_lossy(bytes);
    let text = clean_line(&decoded);
    if !text.trim().is_empty() {
        emit(text);
    }
}

/// Largest index ≤ `limit` that does not cut a UTF-8 sequence (or `limit` for invalid data).
fn utf8_boundary(bytes: &[u8], limit: usize) -> usize {
    let limit = limit.min(bytes.len());
    (limit.saturating_sub(3)..=limit)
        .rev()
        .find(|&i| i == bytes.len() || (bytes[i] & 0xC0) != 0x80)
        .unwrap_or(limit)
}

/// Strips ANSI escape sequences, and keeps what a terminal would show of a line that
/// redraws itself with carriage returns (the text after the last `\r`).
pub fn clean_line(line: &str) -> String {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let line = match line.rfind('\r') {
        Some(pos) => &line[pos + 1..],
        None => line,
    };
    strip_ansi(line)
}

pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte in @..~
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: up to BEL or ESC \
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' {
                            break;
                        }
                        if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                            chars.next();
                            break;
                        }
                    }
                }
                // Character-set selection and the like take one more character.
                Some('(' | ')' | '*' | '+' | '#' | '%') => {
                    chars.next();
                }
                _ => {}
            },
            // 8-bit CSI
            '\u{9b}' => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            c if c.is_control() && c != '\t' => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[path = "line_decoder_props.rs"]
mod props;

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]]) -> Vec<String> {
        let mut decoder = LineDecoder::new();
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.push(chunk, |l| out.push(l));
        }
        decoder.finish(|l| out.push(l));
        out
    }

    #[test]
    fn a_line_split_across_chunks_is_one_line() {
        assert_eq!(lines(&[b"hel", b"lo\nwor", b"ld\n"]), ["hello", "world"]);
    }

    #[test]
    fn multibyte_characters_split_across_chunks_stay_whole() {
        let text = "é€😀\n".as_bytes();
        for cut in 1..text.len() {
            assert_eq!(
                lines(&[&text[..cut], &text[cut..]]),
                ["é€😀"],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_not_thrown() {
        assert_eq!(lines(&[b"a\xffb\n"]), ["a\u{fffd}b"]);
    }

    #[test]
    fn blank_lines_are_dropped_and_last_line_is_flushed() {
        assert_eq!(lines(&[b"a\n\n  \n\r\nb"]), ["a", "b"]);
    }

    #[test]
    fn ansi_sequences_are_stripped() {
        assert_eq!(
            lines(&[b"\x1b[1;31mred\x1b[0m \x1b]0;title\x07plain\x1b(B\n"]),
            ["red plain"]
        );
    }

    #[test]
    fn carriage_return_redraws_keep_the_last_frame() {
        assert_eq!(lines(&[b"10%\r50%\r100%\r\n"]), ["100%"]);
    }

    #[test]
    fn endless_lines_are_cut_at_a_character_boundary() {
        let mut decoder = LineDecoder::new();
        let mut out = Vec::new();
        let big = "é".repeat(MAX_PENDING);
        decoder.push(big.as_bytes(), |l| out.push(l));
        decoder.finish(|l| out.push(l));
        assert!(out.len() >= 2);
        assert!(out.iter().all(|l| !l.contains('\u{fffd}')));
        assert_eq!(out.concat(), big);
    }

    #[test]
    fn a_long_line_is_cut_alike_however_it_arrives() {
        let mut data = vec![b'x'; MAX_PENDING + 2];
        data.push(b'\n');
        let whole = lines(&[&data]);
        assert_eq!(whole.len(), 2);
        assert_eq!(lines(&[&data[..MAX_PENDING], &data[MAX_PENDING..]]), whole);
    }

    #[test]
    fn streams_are_kept_apart() {
        let mut decoder = OutputDecoder::new();
        let mut out = Vec::new();
        decoder.push(StreamKind::Stdout, b"o1", |l| out.push(l));
        decoder.push(StreamKind::Stderr, b"e1\n", |l| out.push(l));
        decoder.push(StreamKind::Stdout, b"o2\n", |l| out.push(l));
        decoder.finish(|l| out.push(l));
        let shown: Vec<_> = out
            .iter()
            .map(|l| format!("{}:{}", l.stream.as_str(), l.text))
            .collect();
        assert_eq!(shown, ["stderr:e1", "stdout:o1o2"]);
    }
}
