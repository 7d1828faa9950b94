//! The egress proxy's view of a client's stream (`RequestGuard`, over `http_head` and
//! `chunked_body`): what it hands on to hyper, and the refusal, are the same however the
//! stream arrives and is read; what it hands on is whole messages as httparse (hyper's
//! parser) reads them, each with the CONNECT flag, framing and host:port our parser
//! checked; after a refused head nothing but its stand-in passes. Answered by a proxy that
//! switches protocols whenever it may, the same holds until an upgrade request (as hyper
//! reads one) without a body, after which the rest passes as it is.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

use super::rng::{pieces, Rng};
use crate::egress::http_head::{host_port, parse_head, BodyLength, RequestHead};
use crate::egress::request_guard::{RefusedHead, RequestGuard, Switched, STAND_IN};

/// A client whose bytes arrive in the given pieces.
struct Arrivals<'a>(Vec<&'a [u8]>);

impl AsyncRead for Arrivals<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if let Some(piece) = self.0.first_mut() {
            let n = piece.len().min(buf.remaining());
            buf.put_slice(&piece[..n]);
            *piece = &piece[n..];
            if piece.is_empty() {
                self.0.remove(0);
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// What hyper would read (until the end or an error), the error, and the refusal.
#[derive(Debug, PartialEq)]
struct Outcome {
    handed_on: Vec<u8>,
    error: Option<String>,
    refused: Option<String>,
}

/// With `switch`, the proxy answers `101` to every request (the guard must honour it only
/// for an upgrade request without a body).
fn outcome(pieces: Vec<&[u8]>, read_size: usize, switch: bool) -> Outcome {
    let pieces = pieces.into_iter().filter(|p| !p.is_empty()).collect();
    let refused = RefusedHead::default();
    let switched = Switched::default();
    let mut guard = RequestGuard::new(Arrivals(pieces), refused.clone(), switched.clone());
    let waker = futures_util::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    let (mut handed_on, mut buf) = (Vec::new(), vec![0u8; read_size]);
    let error = loop {
        let mut read = ReadBuf::new(&mut buf);
        match Pin::new(&mut guard).poll_read(&mut cx, &mut read) {
            Poll::Ready(Ok(())) if read.filled().is_empty() => break None,
            Poll::Ready(Ok(())) => handed_on.extend_from_slice(read.filled()),
            Poll::Ready(Err(e)) => break Some(e.to_string()),
            Poll::Pending => panic!("the guard waits on a client that never does"),
        }
        if switch {
            switched.store(true, std::sync::atomic::Ordering::Release);
        }
    };
    let refused = refused.lock().unwrap().clone();
    Outcome {
        handed_on,
        error,
        refused,
    }
}

pub fn check_http_proxy(data: &[u8]) {
    for switch in [false, true] {
        let whole = outcome(vec![data], data.len() + STAND_IN.len() + 1, switch);
        let mut rng = Rng::from_bytes(data);
        for (single, read_size) in [(true, 4096), (false, 1), (false, 7), (false, 4096)] {
            // A byte at a time costs the guard a 16 KiB read buffer per byte: short inputs only.
            let cuts = rng.cuts(data.len(), single && data.len() <= 256);
            assert_eq!(
                outcome(pieces(data, &cuts), read_size, switch),
                whole,
                "a different outcome when cut at {cuts:?} and read {read_size} at a time (switching: {switch})"
            );
        }
        assert!(whole.handed_on.len() <= data.len().max(STAND_IN.len()) + STAND_IN.len());
        walk(&whole.handed_on, whole.refused.is_some(), switch);
    }
}

/// Reads what was handed on as hyper would: message after message, each head checked
/// against ours, each body skipped by its framing; the stand-in last after a refusal.
/// With `switched`, an upgrade request without a body ends the messages.
fn walk(mut out: &[u8], refused: bool, switched: bool) {
    while !out.is_empty() {
        if refused && out == STAND_IN {
            return;
        }
        // A head httparse refuses is hyper's 400, and the connection's end.
        let Some((len, head)) = hyper_head(out) else {
            return;
        };
        out = &out[len..];
        if head.connect || (switched && head.upgrade && head.body == BodyLength::Empty) {
            assert!(!refused, "tunnel bytes before a refused head");
            return;
        }
        let body = match head.body {
            BodyLength::Empty => 0,
            BodyLength::Length(n) => usize::try_from(n).unwrap_or(usize::MAX),
            BodyLength::Chunked => match chunked_length(out) {
                Some(n) => n,
                None => return,
            },
        };
        if body > out.len() {
            assert!(!refused, "a refused head inside a body");
            return;
        }
        out = &out[body..];
    }
    assert!(!refused, "a refusal with no stand-in");
}

/// The framing hyper gives a request with these `Transfer-Encoding` and `Content-Length`
/// values (its rules: the last coding decides; a length is a comma list of one number).
fn hyper_framing(codings: &[&[u8]], lengths: &[&[u8]]) -> Option<BodyLength> {
    if let Some(last) = codings.last() {
        let last = String::from_utf8_lossy(last);
        let chunked = last
            .rsplit(',')
            .next()
            .is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked"));
        return chunked.then_some(BodyLength::Chunked);
    }
    let mut length = None;
    for value in lengths {
        for item in std::str::from_utf8(value).ok()?.split(',') {
            let n: u64 = item.trim().parse().ok()?;
            if length.is_some_and(|l| l != n) {
                return None;
            }
            length = Some(n);
        }
    }
    Some(match length {
        None | Some(0) => BodyLength::Empty,
        Some(n) => BodyLength::Length(n),
    })
}

/// The head that starts `out` as httparse reads it, checked against ours: `None` when
/// httparse refuses it.
fn hyper_head(out: &[u8]) -> Option<(usize, RequestHead)> {
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut request = httparse::Request::new(&mut headers);
    let len = match request.parse(out) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => panic!("a head handed on in part"),
        Err(_) => return None,
    };
    let ours = parse_head(&out[..len]).expect("a handed-on head passes our parser");
    let method = request.method.unwrap_or_default();
    assert_eq!(
        method == "CONNECT",
        ours.connect,
        "CONNECT flag of {method}"
    );
    let upgrade = request.version == Some(1)
        && !ours.connect
        && request
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("upgrade"));
    assert_eq!(upgrade, ours.upgrade, "upgrade flag");
    let named = |name: &str| -> Vec<&[u8]> {
        let headers = request.headers.iter();
        let named = headers.filter(|h| h.name.eq_ignore_ascii_case(name));
        named.map(|h| h.value).collect()
    };
    let framing = hyper_framing(&named("transfer-encoding"), &named("content-length"));
    assert_eq!(framing.as_ref(), Some(&ours.body), "framing");
    let target = request.path.unwrap_or_default();
    if let Ok(uri) = target.parse::<hyper::Uri>() {
        let authority = uri.authority().map(|a| a.as_str()).unwrap_or("");
        let default = (!ours.connect).then_some(80);
        let hyper_sees = host_port(authority, default);
        assert_eq!(hyper_sees, Ok((ours.host.clone(), ours.port)), "{target}");
    }
    Some((len, ours))
}

/// The length of the chunked body that starts `out`, read the plain way (sizes by
/// httparse); `None` when `out` ends inside it.
fn chunked_length(out: &[u8]) -> Option<usize> {
    let mut at = 0;
    loop {
        let (used, size) = match httparse::parse_chunk_size(&out[at..]) {
            Ok(httparse::Status::Complete(found)) => found,
            Ok(httparse::Status::Partial) => return None,
            Err(_) => panic!("a handed-on chunk-size line httparse refuses"),
        };
        at += used;
        if size == 0 {
            break;
        }
        at = at.checked_add(usize::try_from(size).ok()?)?;
        let crlf = out.get(at..)?.get(..2)?;
        assert_eq!(crlf, b"\r\n", "a chunk's data ends without CRLF");
        at += 2;
    }
    loop {
        let rest = out.get(at..)?;
        let line = rest.windows(2).position(|w| w == b"\r\n")?;
        at += line + 2;
        if line == 0 {
            return Some(at);
        }
    }
}
