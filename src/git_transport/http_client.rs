//! The HTTP client of one transfer: reqwest on a current-thread runtime of its own (libgit2
//! calls in on a blocking thread), bounded by the transfer's deadline, with the caller's
//! CA, basic credentials and redirect rule.

use super::context::TransferContext;
use super::credentials::Credentials;
use crate::error::{Error, ErrorCode, Result};
use base64::Engine as _;
use reqwest::header::{HeaderValue, AUTHORIZATION};
use reqwest::{redirect, Method, RequestBuilder, StatusCode};
use std::future::Future;
use std::sync::Arc;
use url::Url;

pub(super) const USER_AGENT: &str = "git/2.0 (container-isolation)";

/// Redirects followed for one request, as git's `http.followRedirects` default.
const MAX_REDIRECTS: usize = 5;

pub(super) struct HttpClient {
    runtime: Option<tokio::runtime::Runtime>,
    client: reqwest::Client,
    authorization: Option<HeaderValue>,
    pub context: Arc<TransferContext>,
}

impl HttpClient {
    pub fn new(context: Arc<TransferContext>) -> Result<HttpClient> {
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            Error::new(ErrorCode::Git, format!("{}: {what}: {e}", context.url))
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| failed("cannot start the HTTP runtime", &e))?;
        let origin = Url::parse(context.url.as_str())
            .map_err(|e| Error::invalid_argument(format!("{}: {e}", context.url)))?
            .origin();
        let mut builder = reqwest::Client::builder()
            .user_agent(USER_AGENT)
            .redirect(redirect_policy(origin))
            .referer(false);
        if let Some(pem) = &context.ca_certificate {
            let certificates = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
                .map_err(|e| Error::invalid_argument(format!("ca_certificate: {e}")))?;
            builder = builder.tls_certs_merge(certificates);
        }
        if context.url.is_loopback() {
            builder = builder.no_proxy();
        }
        let client = {
            let _entered = runtime.enter();
            builder.build()
        }
        .map_err(|e| failed("cannot make the HTTP client", &e))?;
        Ok(HttpClient {
            runtime: Some(runtime),
            client,
            authorization: basic_authorization(context.credentials.as_ref()),
            context,
        })
    }

    /// A request with the credentials on it from the start (no 401 round trip for a token).
    pub fn request(&self, method: Method, url: Url) -> RequestBuilder {
        let request = self.client.request(method, url);
        match &self.authorization {
            Some(value) => request.header(AUTHORIZATION, value.clone()),
            None => request,
        }
    }

    /// Runs `future` to its end or to the transfer's deadline (then TIMEOUT).
    pub fn block_on<F: Future>(&self, what: &str, future: F) -> Result<F::Output> {
        let deadline = tokio::time::Instant::from_std(self.context.deadline);
        self.runtime()
            .block_on(async { tokio::time::timeout_at(deadline, future).await })
            .map_err(|_| self.context.timeout_error(what))
    }

    pub fn spawn<F>(&self, future: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.runtime().spawn(future)
    }

    pub fn has_credentials(&self) -> bool {
        self.authorization.is_some()
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime
            .as_ref()
            .expect("the runtime lives as long as the client")
    }
}

impl Drop for HttpClient {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn basic_authorization(credentials: Option<&Credentials>) -> Option<HeaderValue> {
    let Some(Credentials::Basic { username, password }) = credentials else {
        return None;
    };
    let token = base64::engine::general_purpose::STANDARD
        .encode(format!("{username}:{}", password.expose()));
    let mut value = HeaderValue::from_str(&format!("Basic {token}")).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// Follows at most five redirects of an `info/refs` GET, each to the same scheme, host and
/// port (a renamed repository); a POST's redirect is not followed.
fn redirect_policy(origin: url::Origin) -> redirect::Policy {
    redirect::Policy::custom(move |attempt| {
        let from_info_refs = attempt
            .previous()
            .last()
            .is_some_and(|from| from.path().ends_with("/info/refs"));
        if attempt.previous().len() > MAX_REDIRECTS {
            let message = format!("more than {MAX_REDIRECTS} redirects");
            attempt.error(message)
        } else if attempt.url().origin() != origin {
            let message = format!(
                "a redirect to {} refused: only one to the same scheme, host and port is followed",
                attempt.url().origin().ascii_serialization()
            );
            attempt.error(message)
        } else if !from_info_refs {
            attempt.stop()
        } else {
            attempt.follow()
        }
    })
}

/// GIT_AUTH for 401, and for 403 when credentials were sent; GIT for another status.
pub(super) fn status_error(http: &HttpClient, what: &str, status: StatusCode) -> Error {
    let url = &http.context.url;
    let with = http.has_credentials();
    match status {
        StatusCode::UNAUTHORIZED if with => Error::new(
            ErrorCode::GitAuth,
            format!("{what} {url}: the server refused the credentials ({status})"),
        ),
        StatusCode::UNAUTHORIZED => Error::new(
            ErrorCode::GitAuth,
            format!("{what} {url}: the server asks for credentials and none were given ({status})"),
        ),
        StatusCode::FORBIDDEN if with => Error::new(
            ErrorCode::GitAuth,
            format!("{what} {url}: the credentials are not allowed to do this ({status})"),
        ),
        StatusCode::NOT_FOUND => Error::new(
            ErrorCode::Git,
            format!("{what} {url}: no repository there ({status})"),
        ),
        _ => Error::new(
            ErrorCode::Git,
            format!("{what} {url}: the server answered {status}"),
        ),
    }
}

/// GIT naming the request's failure and its causes (a certificate, a refused connection).
pub(super) fn request_error(http: &HttpClient, what: &str, error: reqwest::Error) -> Error {
    let error = error.without_url();
    let mut message = format!("{what} {}: {error}", http.context.url);
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.ends_with(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    let mut end = message.len().min(4096);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message.truncate(end);
    Error::new(ErrorCode::Git, message)
}
