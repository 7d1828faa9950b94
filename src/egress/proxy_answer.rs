//! The answers the HTTP proxy gives of its own: a tunnel established, and the refusals a
//! tool can show (`403` for the policy, `502` for what could not be reached, `400` for
//! what is not a request the proxy relays), each one line in the body and in the
//! `X-Container-Isolation-Refusal` header, each closing the connection.

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderValue, CONNECTION, CONTENT_TYPE};
use hyper::{Response, StatusCode};

pub type BoxError = Box<dyn std::error::Error + Send + Sync>;
/// The body of every answer the proxy gives, its own or a server's.
pub type ProxyBody = BoxBody<Bytes, BoxError>;

pub const REFUSAL_HEADER: &str = "x-container-isolation-refusal";

/// The line of a `403`: what was refused, why, and how the host allows it.
pub fn refusal_line(host: &str, port: u16, reason: &str) -> String {
    format!(
        "container-isolation: egress to {host}:{port} refused by the session's policy ({reason}); \
         the host allows it by adding '{host}:{port}' (or, for a private address, its address or range) \
         to the session's egress allow list"
    )
}

pub fn refused(host: &str, port: u16, reason: &str) -> Response<ProxyBody> {
    refusal(StatusCode::FORBIDDEN, &refusal_line(host, port, reason))
}

pub fn unreachable(host: &str, port: u16, why: &str) -> Response<ProxyBody> {
    let line = format!("container-isolation: {host}:{port} could not be reached: {why}");
    refusal(StatusCode::BAD_GATEWAY, &line)
}

pub fn bad_request(why: &str) -> Response<ProxyBody> {
    refusal(
        StatusCode::BAD_REQUEST,
        &format!("container-isolation: {why}"),
    )
}

pub fn established() -> Response<ProxyBody> {
    let mut response = Response::new(Empty::new().map_err(|never| match never {}).boxed());
    if let Ok(reason) = hyper::ext::ReasonPhrase::try_from(&b"Connection established"[..]) {
        response.extensions_mut().insert(reason);
    }
    response
}

/// A whole response refusing the request, `line` as its body and in the header.
pub fn refusal(status: StatusCode, line: &str) -> Response<ProxyBody> {
    let header: String = line
        .chars()
        .map(|c| {
            if c.is_ascii() && !c.is_ascii_control() {
                c
            } else {
                ' '
            }
        })
        .collect();
    let body = Full::new(Bytes::from(format!("{line}\n")))
        .map_err(|never| match never {})
        .boxed();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    if let Ok(value) = HeaderValue::from_str(&header) {
        headers.insert(REFUSAL_HEADER, value);
    }
    headers.insert(CONNECTION, HeaderValue::from_static("close"));
    response
}
