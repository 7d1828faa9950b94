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
                let Some(end) = line_end(bytes, MAX_SIZE_LINE, "a chunk-size line")? else {
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
                let room = MAX_TRAILERS - self.trailer_bytes;
                let Some(end) = line_end(bytes, room, "the trailer section")? else {
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
/// bare CR or LF or another control character but a tab refuses it.
fn line_end(bytes: &[u8], limit: usize, what: &str) -> Result<Option<usize>, String> {
    for (at, b) in bytes.iter().enumerate() {
        if at >= limit {
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

    /// Feeds `bytes` in pieces of `step`; the body's length, or the error.
    fn body_end(bytes: &[u8], step: usize) -> Result<Option<usize>, String> {
        let mut body = ChunkedBody::new();
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
                None => have = (have + step).min(bytes.len()),
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
}
