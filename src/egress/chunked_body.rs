//! Where a chunked request body ends, found the strict way before the HTTP implementation
//! reads it: each chunk-size line hex digits and an optional extension, no control
//! character, CRLF (the number read by httparse, hyper's own parser); each chunk's data
//! followed by CRLF; the trailer lines as strict as header lines.

use super::http_head::header_line;

const MAX_SIZE_LINE: usize = 4096;
const MAX_TRAILERS: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    SizeLine,
    Data(u64),
    DataEnd,
    Trailers,
}

#[derive(Debug)]
pub struct ChunkedBody {
    part: Part,
    trailer_bytes: usize,
    max_trailers: usize,
}

/// How many more of a body's bytes were found, and whether that was its end.
#[derive(Debug, PartialEq, Eq)]
pub struct Found {
    pub bytes: usize,
    pub ended: bool,
}

impl ChunkedBody {
    pub fn new() -> ChunkedBody {
        ChunkedBody {
            part: Part::SizeLine,
            trailer_bytes: 0,
            max_trailers: MAX_TRAILERS,
        }
    }

    /// Looks at `bytes`, the body's bytes not yet found; `None` until more arrive.
    pub fn advance(&mut self, bytes: &[u8]) -> Result<Option<Found>, String> {
        let more = |n: usize| {
            Ok(Some(Found {
                bytes: n,
                ended: false,
            }))
        };
        match self.part {
            Part::Data(left) => {
                if bytes.is_empty() {
                    return Ok(None);
                }
                let n = (bytes.len() as u64).min(left);
                self.part = match left - n {
                    0 => Part::DataEnd,
                    rest => Part::Data(rest),
                };
                more(n as usize)
            }
            Part::DataEnd => match bytes.get(..2) {
                None if bytes.first().is_none_or(|b| *b == b'\r') => Ok(None),
                Some(b"\r\n") => {
                    self.part = Part::SizeLine;
                    more(2)
                }
                _ => Err("a chunk's data is not followed by CRLF".into()),
            },
            Part::SizeLine => {
                let Some(end) = line_end(bytes, 0, MAX_SIZE_LINE, "a chunk-size line")? else {
                    return Ok(None);
                };
                let size = chunk_size(&bytes[..end])?;
                self.part = match size {
                    0 => Part::Trailers,
                    n => Part::Data(n),
                };
                more(end)
            }
            Part::Trailers => {
                let (used, limit) = (self.trailer_bytes, self.max_trailers);
                let Some(end) = line_end(bytes, used, limit, "the trailer section")? else {
                    return Ok(None);
                };
                self.trailer_bytes += end;
                if end == 2 {
                    return Ok(Some(Found {
                        bytes: 2,
                        ended: true,
                    }));
                }
                let line = std::str::from_utf8(&bytes[..end - 2])
                    .map_err(|_| "a trailer line that is not UTF-8")?;
                header_line(line).map_err(|why| format!("in the trailer section: {why}"))?;
                more(end)
            }
        }
    }
}

/// The length of the CRLF-terminated line that starts `bytes`, `None` while incomplete; a
/// bare CR or LF or another control character but a tab refuses it, and so does a line
/// that, with its CRLF, would take `what` past `limit` bytes when `used` are taken. Each
/// byte is judged on those before it alone, so where the input is split cannot matter.
fn line_end(bytes: &[u8], used: usize, limit: usize, what: &str) -> Result<Option<usize>, String> {
    for (at, b) in bytes.iter().enumerate() {
        // The shortest line holding this byte: up to it, then CRLF (it may be the CR).
        if used.saturating_add(at).saturating_add(2) > limit {
            return Err(format!("{what} is over {limit} bytes"));
        }
        match *b {
            b'\r' => {
                return match bytes.get(at + 1) {
                    None => Ok(None),
                    Some(b'\n') => Ok(Some(at + 2)),
                    Some(_) => Err(format!("a bare CR in {what}")),
                }
            }
            b'\n' => return Err(format!("a bare LF in {what}")),
            b'\t' => {}
            b if b < 0x20 || b == 0x7f => {
                return Err(format!("a control character (0x{b:02x}) in {what}"))
            }
            _ => {}
        }
    }
    Ok(None)
}

/// The size a whole chunk-size line gives: at least one hex digit first.
fn chunk_size(line: &[u8]) -> Result<u64, String> {
    let bad = || "a chunk-size line that is not hex digits [; extension]".to_string();
    if !line.first().is_some_and(u8::is_ascii_hexdigit) {
        return Err(bad());
    }
    match httparse::parse_chunk_size(line) {
        Ok(httparse::Status::Complete((used, size))) if used == line.len() => Ok(size),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `bytes` to `body` as they would arrive: up to each of `arrivals` in turn, then
    /// all; the body's length, or the error.
    fn feed(
        mut body: ChunkedBody,
        bytes: &[u8],
        arrivals: impl IntoIterator<Item = usize>,
    ) -> Result<Option<usize>, String> {
        let mut arrivals = arrivals.into_iter();
        let (mut found, mut have) = (0, 0);
        loop {
            match body.advance(&bytes[found..have])? {
                Some(Found { bytes: n, ended }) => {
                    found += n;
                    if ended {
                        return Ok(Some(found));
                    }
                }
                None if have == bytes.len() => return Ok(None),
                None => {
                    let next = arrivals.next().unwrap_or(bytes.len());
                    have = next.clamp(have, bytes.len());
                }
            }
        }
    }

    /// Feeds `bytes` in pieces of `step`.
    fn body_end(bytes: &[u8], step: usize) -> Result<Option<usize>, String> {
        feed(ChunkedBody::new(), bytes, (1..).map(|n| n * step))
    }

    /// A last chunk and a trailer section of `len` bytes, its blank line included.
    fn with_trailers(len: usize) -> Vec<u8> {
        let mut body = b"0\r\n".to_vec();
        let mut lines = len - 2;
        while lines > 0 {
            let line = match lines {
                ..=100 => lines,
                101..105 => lines - 5,
                _ => 100,
            };
            body.extend(b"X:");
            body.extend(std::iter::repeat_n(b'a', line - 4));
            body.extend(b"\r\n");
            lines -= line;
        }
        body.extend(b"\r\n");
        body
    }

    #[test]
    fn a_trailer_section_over_its_budget_is_refused_wherever_the_input_is_split() {
        let over = format!("the trailer section is over {MAX_TRAILERS} bytes");
        let at_bound = with_trailers(MAX_TRAILERS);
        for step in [1, 2, 3, 7, 100, 4096, at_bound.len()] {
            assert_eq!(
                body_end(&at_bound, step),
                Ok(Some(at_bound.len())),
                "step {step}"
            );
        }
        for past in [3, 1, 2] {
            let body = with_trailers(MAX_TRAILERS + past);
            for step in [1, 2, 3, 7, 100, 4096, body.len()] {
                assert_eq!(
                    body_end(&body, step),
                    Err(over.clone()),
                    "+{past} step {step}"
                );
            }
            for cut in body.len() - 300..body.len() {
                let split = feed(ChunkedBody::new(), &body, [cut]);
                assert_eq!(split, Err(over.clone()), "+{past} cut at {cut}");
            }
        }
    }

    #[test]
    fn a_small_trailer_budget_gives_one_outcome_for_every_split() {
        let max_trailers = 24;
        let small = || ChunkedBody {
            max_trailers,
            ..ChunkedBody::new()
        };
        for len in [2, 7, 8, 20, 23, 24, 25, 26, 27, 40] {
            let body = with_trailers(len);
            let whole = feed(small(), &body, []);
            if len <= max_trailers {
                assert_eq!(whole, Ok(Some(body.len())), "{len}");
            } else {
                let over = format!("the trailer section is over {max_trailers} bytes");
                assert_eq!(whole, Err(over), "{len}");
            }
            for first in 0..=body.len() {
                for second in first..=body.len() {
                    let split = feed(small(), &body, [first, second]);
                    assert_eq!(split, whole, "{len}: cut at {first} and {second}");
                }
            }
        }
    }

    #[test]
    fn a_chunked_body_ends_after_its_last_chunk_and_trailers() {
        let body = b"5\r\nhello\r\n1A;name=value\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Sum: 1\r\n\r\nGET next";
        for step in [1, 3, 7, 4096] {
            assert_eq!(
                body_end(body, step),
                Ok(Some(body.len() - 8)),
                "step {step}"
            );
        }
        assert_eq!(body_end(b"0\r\n\r\n", 1), Ok(Some(5)));
        assert_eq!(body_end(b"5\r\nhel", 2), Ok(None));
    }

    #[test]
    fn what_two_readers_could_frame_differently_is_refused() {
        for bad in [
            &b"5\nhello\r\n0\r\n\r\n"[..],
            b"5\r\nhello\n0\r\n\r\n",
            b"5\r\nhelloX\r\n0\r\n\r\n",
            b";x\r\nhello\r\n",
            b"-5\r\n",
            b"5 6\r\n",
            b"5;a\nb\r\n",
            b"5;\x00\r\n",
            b"0\r\nX: a\nb\r\n\r\n",
            b"0\r\n folded\r\n\r\n",
            b"0\r\nno colon\r\n\r\n",
            b"11111111111111111\r\n",
        ] {
            assert!(
                body_end(bad, 1).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let mut long = b"5;".to_vec();
        long.extend(std::iter::repeat_n(b'x', MAX_SIZE_LINE));
        assert!(body_end(&long, 4096).is_err());
    }

    /// A chunk-size line of `len` bytes, its CRLF included, and an empty last chunk.
    fn with_size_line(len: usize) -> Vec<u8> {
        let mut body = b"0;".to_vec();
        body.extend(std::iter::repeat_n(b'x', len - 4));
        body.extend(b"\r\n\r\n");
        body
    }

    #[test]
    fn a_chunk_size_line_may_take_its_bound_and_no_more() {
        let at_bound = with_size_line(MAX_SIZE_LINE);
        assert_eq!(body_end(&at_bound, 1), Ok(Some(at_bound.len())));
        let over = Err(format!("a chunk-size line is over {MAX_SIZE_LINE} bytes"));
        for step in [1, 2, 4096, 4097] {
            assert_eq!(body_end(&with_size_line(MAX_SIZE_LINE + 1), step), over);
        }
    }
}
