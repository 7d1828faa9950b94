//! The smart HTTP subtransport (stateless RPC): a GET of `info/refs` for the advertisement,
//! then a POST per round whose request body streams libgit2's writes as they come.

use super::context::{to_git2, to_io, TransferContext};
use super::http_client::{request_error, status_error, HttpClient};
use crate::error::{Error, ErrorCode, Result};
use bytes::Bytes;
use git2::transport::{Service, SmartSubtransport, SmartSubtransportStream};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Method, Response};
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use url::Url;

/// Chunks of a request body in flight between libgit2's writes and the connection.
const BODY_CHANNEL_CHUNKS: usize = 4;

pub(super) struct HttpSubtransport {
    http: Arc<HttpClient>,
    /// The repository's URL, moved by a redirect of its `info/refs`.
    base: Mutex<Url>,
}

impl HttpSubtransport {
    pub fn new(context: Arc<TransferContext>) -> Result<HttpSubtransport> {
        let base = base_url(context.url.as_str())?;
        let http = Arc::new(HttpClient::new(context)?);
        Ok(HttpSubtransport {
            http,
            base: Mutex::new(base),
        })
    }

    fn base(&self) -> Url {
        self.base.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn stream(&self, url: &str, service: Service) -> Result<Box<dyn SmartSubtransportStream>> {
        self.http.context.check_url(url)?;
        let (name, post) = match service {
            Service::UploadPackLs => ("git-upload-pack", false),
            Service::ReceivePackLs => ("git-receive-pack", false),
            Service::UploadPack => ("git-upload-pack", true),
            Service::ReceivePack => ("git-receive-pack", true),
        };
        let what = if name == "git-upload-pack" {
            "fetch from"
        } else {
            "push to"
        };
        let call = Call {
            http: self.http.clone(),
            name,
            what,
        };
        if post {
            let url = join(&self.base(), &format!("/{name}"), None);
            return Ok(Box::new(PostStream {
                call,
                url,
                state: PostState::Idle,
            }));
        }
        let (body, moved_to) = call.advertisement(&self.base())?;
        if let Some(base) = moved_to {
            *self.base.lock().unwrap_or_else(|e| e.into_inner()) = base;
        }
        Ok(Box::new(body))
    }
}

impl SmartSubtransport for HttpSubtransport {
    fn action(
        &self,
        url: &str,
        service: Service,
    ) -> std::result::Result<Box<dyn SmartSubtransportStream>, git2::Error> {
        self.stream(url, service)
            .map_err(|error| to_git2(&self.http.context.fail(error)))
    }

    fn close(&self) -> std::result::Result<(), git2::Error> {
        Ok(())
    }
}

/// The repository URL with no credentials and no trailing '/'.
fn base_url(text: &str) -> Result<Url> {
    let mut url = Url::parse(text).map_err(|e| Error::invalid_argument(format!("{text}: {e}")))?;
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let path = url.path().trim_end_matches('/').to_string();
    url.set_path(&path);
    Ok(url)
}

fn join(base: &Url, suffix: &str, query: Option<&str>) -> Url {
    let mut url = base.clone();
    url.set_path(&format!("{}{suffix}", base.path()));
    url.set_query(query);
    url
}

/// One service's requests: what they ask for and how their answers are checked.
struct Call {
    http: Arc<HttpClient>,
    name: &'static str,
    what: &'static str,
}

impl Call {
    /// GET `info/refs`; the body, and the new base when a redirect moved the repository.
    fn advertisement(&self, base: &Url) -> Result<(BodyReader, Option<Url>)> {
        let url = join(base, "/info/refs", Some(&format!("service={}", self.name)));
        let request = self
            .http
            .request(Method::GET, url.clone())
            .header(ACCEPT, format!("application/x-{}-advertisement", self.name));
        let response = self.http.block_on(&self.doing(), request.send())?;
        let response = response.map_err(|e| request_error(&self.http, self.what, e))?;
        let moved_to = if response.url() == &url {
            None
        } else {
            Some(moved_base(&self.http, self.what, response.url())?)
        };
        let body = self.check(response, "advertisement")?;
        Ok((body, moved_to))
    }

    /// The answer as a body to read, if its status and content type are a smart server's.
    fn check(&self, response: Response, answer: &str) -> Result<BodyReader> {
        let status = response.status();
        if !status.is_success() {
            return Err(status_error(&self.http, self.what, status));
        }
        let expected = format!("application/x-{}-{answer}", self.name);
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_string();
        let essence = content_type.split(';').next().unwrap_or("").trim();
        if !essence.eq_ignore_ascii_case(&expected) {
            let url = &self.http.context.url;
            let dumb = if answer == "advertisement" {
                " (a dumb HTTP server? only the smart protocol is supported)"
            } else {
                ""
            };
            return Err(Error::new(
                ErrorCode::Git,
                format!(
                    "{} {url}: the server answered with content type {content_type:?}, \
                     not {expected}{dumb}",
                    self.what
                ),
            ));
        }
        Ok(BodyReader {
            http: self.http.clone(),
            what: self.doing(),
            response,
            pending: Bytes::new(),
        })
    }

    fn failure(&self, what_failed: &str) -> Error {
        let url = &self.http.context.url;
        Error::new(
            ErrorCode::Git,
            format!("{} {url}: {what_failed}", self.what),
        )
    }

    fn doing(&self) -> String {
        format!(
            "{} ({})",
            self.what.split(' ').next().unwrap_or(""),
            self.name
        )
    }
}

/// The base a redirect of `.../info/refs` points at.
fn moved_base(http: &HttpClient, what: &str, to: &Url) -> Result<Url> {
    match to.path().strip_suffix("/info/refs") {
        Some(path) => {
            let mut base = to.clone();
            base.set_path(path);
            base.set_query(None);
            Ok(base)
        }
        None => Err(Error::new(
            ErrorCode::Git,
            format!(
                "{what} {}: redirected to {}, which is not a repository's info/refs",
                http.context.url,
                to.path()
            ),
        )),
    }
}

/// An answer's body, counted against the transfer's bound as it is read.
struct BodyReader {
    http: Arc<HttpClient>,
    what: String,
    response: Response,
    pending: Bytes,
}

impl BodyReader {
    fn fill(&mut self) -> Result<()> {
        let chunk = self.http.block_on(&self.what, self.response.chunk())?;
        let chunk = chunk.map_err(|e| request_error(&self.http, &self.what, e))?;
        if let Some(chunk) = chunk {
            self.http.context.count_received(chunk.len())?;
            self.pending = chunk;
        }
        Ok(())
    }
}

impl Read for BodyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pending.is_empty() {
            if let Err(error) = self.fill() {
                return Err(to_io(&self.http.context.fail(error)));
            }
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        let _ = self.pending.split_to(n);
        Ok(n)
    }
}

impl Write for BodyReader {
    fn write(&mut self, _buf: &[u8]) -> io::Result<usize> {
        Err(io::Error::other("an advertisement is only read"))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

type PendingResponse = tokio::task::JoinHandle<reqwest::Result<Response>>;

enum PostState {
    Idle,
    Sending {
        body: mpsc::Sender<Bytes>,
        response: PendingResponse,
    },
    Receiving(BodyReader),
    Failed,
}

/// A POST: libgit2's writes stream out as its body, its first read waits for the answer.
struct PostStream {
    call: Call,
    url: Url,
    state: PostState,
}

impl PostStream {
    fn start(&self) -> (mpsc::Sender<Bytes>, PendingResponse) {
        let (sender, mut receiver) = mpsc::channel::<Bytes>(BODY_CHANNEL_CHUNKS);
        let chunks = futures_util::stream::poll_fn(move |cx| {
            receiver
                .poll_recv(cx)
                .map(|chunk| chunk.map(Ok::<Bytes, io::Error>))
        });
        let name = self.call.name;
        let request = self
            .call
            .http
            .request(Method::POST, self.url.clone())
            .header(CONTENT_TYPE, format!("application/x-{name}-request"))
            .header(ACCEPT, format!("application/x-{name}-result"))
            .body(reqwest::Body::wrap_stream(chunks));
        (sender, self.call.http.spawn(request.send()))
    }

    fn send(&mut self, buf: &[u8]) -> Result<()> {
        if let PostState::Idle = self.state {
            let (body, response) = self.start();
            self.state = PostState::Sending { body, response };
        }
        let PostState::Sending { body, .. } = &self.state else {
            return Err(self.call.failure("a write after the answer was read"));
        };
        let chunk = Bytes::copy_from_slice(buf);
        let sent = self
            .call
            .http
            .block_on(&self.call.doing(), body.send(chunk))?;
        if sent.is_err() {
            // The request ended before its body did: its answer says why.
            let reader = self.answer()?;
            self.state = PostState::Receiving(reader);
            return Err(self.call.failure("the server ended the request early"));
        }
        Ok(())
    }

    /// Ends the body and waits for the answer.
    fn answer(&mut self) -> Result<BodyReader> {
        let PostState::Sending { body, response } =
            std::mem::replace(&mut self.state, PostState::Failed)
        else {
            return Err(self.call.failure("a read before any request was written"));
        };
        drop(body);
        let http = &self.call.http;
        let response = http.block_on(&self.call.doing(), response)?;
        let response = response
            .map_err(|e| self.call.failure(&format!("the request task failed: {e}")))?
            .map_err(|e| request_error(http, self.call.what, e))?;
        self.call.check(response, "result")
    }
}

impl Write for PostStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.send(buf) {
            Ok(()) => Ok(buf.len()),
            Err(error) => {
                self.state = PostState::Failed;
                Err(to_io(&self.call.http.context.fail(error)))
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for PostStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let PostState::Sending { .. } | PostState::Idle = self.state {
            match self.answer() {
                Ok(reader) => self.state = PostState::Receiving(reader),
                Err(error) => return Err(to_io(&self.call.http.context.fail(error))),
            }
        }
        match &mut self.state {
            PostState::Receiving(reader) => reader.read(buf),
            _ => Err(io::Error::other("the request failed")),
        }
    }
}
