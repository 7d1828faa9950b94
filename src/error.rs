//! The one error type of the core: a stable code plus a message naming what was involved.

use std::fmt;

/// Stable error codes, as the JavaScript contract lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    EngineUnavailable,
    /// TLS with an explicitly named engine failed: unknown CA, wrong server name, the
    /// handshake refused (e.g. no client certificate).
    EngineTls,
    ImageNotFound,
    ContainerNotFound,
    ContainerNotRunning,
    Enoent,
    Eisdir,
    Enotdir,
    Eacces,
    Eexist,
    /// Too many levels of symbolic links.
    Eloop,
    /// A file name or path longer than the file system allows.
    Enametoolong,
    /// A file the container controls is larger than this library reads from it.
    Efbig,
    Timeout,
    InvalidArgument,
    Git,
    Devcontainer,
    /// A connection was refused (a forwarded port nothing listens on in the container).
    Econnrefused,
    /// A session's egress policy cannot be enforced there (no agent can run its relay).
    EgressUnavailable,
    /// A git ref, tag or commit given by the caller does not resolve to a commit.
    GitRefNotFound,
    /// Reading something the container controls went past one of the library's bounds
    /// (object size, commits walked, files listed).
    LimitExceeded,
    /// A git remote refused the credentials given, or asked for credentials and none were.
    GitAuth,
    /// A git remote refused to update a ref (not a fast-forward without `force`, or a
    /// server-side rule).
    GitPushRejected,
    /// An image registry refused the credentials the host's docker config gives (or asked
    /// for some and it gives none), or a credential helper failed.
    RegistryAuth,
    /// An image registry refused a pull for the rate of its requests (HTTP 429,
    /// `TOOMANYREQUESTS`).
    RegistryRateLimited,
    /// An image registry answered a pull with a server error (HTTP 5xx).
    RegistryError,
    /// An image registry cannot be reached at all: its name does not resolve, the
    /// connection is refused, TLS with it fails.
    RegistryUnreachable,
    /// A service of a session's compose set did not become ready: its healthcheck failed
    /// or never passed in time, it exited before it was healthy, or a service that must
    /// complete successfully exited with another code. The message names the service.
    ServiceNotReady,
    /// The cluster refused a request for the credentials' permissions (HTTP 403): the
    /// message names the verb and resource the Role lacks.
    Forbidden,
    /// The backend cannot do what was asked (a bind mount on a cluster, a pids limit where
    /// the backend has none per container); the message names the option.
    Unsupported,
    /// The engine answered with an error that none of the codes above describes.
    EngineError,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::EngineUnavailable => "ENGINE_UNAVAILABLE",
            ErrorCode::EngineTls => "ENGINE_TLS",
            ErrorCode::ImageNotFound => "IMAGE_NOT_FOUND",
            ErrorCode::ContainerNotFound => "CONTAINER_NOT_FOUND",
            ErrorCode::ContainerNotRunning => "CONTAINER_NOT_RUNNING",
            ErrorCode::Enoent => "ENOENT",
            ErrorCode::Eisdir => "EISDIR",
            ErrorCode::Enotdir => "ENOTDIR",
            ErrorCode::Eacces => "EACCES",
            ErrorCode::Eexist => "EEXIST",
            ErrorCode::Eloop => "ELOOP",
            ErrorCode::Enametoolong => "ENAMETOOLONG",
            ErrorCode::Efbig => "EFBIG",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::Git => "GIT",
            ErrorCode::Devcontainer => "DEVCONTAINER",
            ErrorCode::Econnrefused => "ECONNREFUSED",
            ErrorCode::EgressUnavailable => "EGRESS_UNAVAILABLE",
            ErrorCode::GitRefNotFound => "GIT_REF_NOT_FOUND",
            ErrorCode::LimitExceeded => "LIMIT_EXCEEDED",
            ErrorCode::GitAuth => "GIT_AUTH",
            ErrorCode::GitPushRejected => "GIT_PUSH_REJECTED",
            ErrorCode::RegistryAuth => "REGISTRY_AUTH",
            ErrorCode::RegistryRateLimited => "REGISTRY_RATE_LIMITED",
            ErrorCode::RegistryError => "REGISTRY_ERROR",
            ErrorCode::RegistryUnreachable => "REGISTRY_UNREACHABLE",
            ErrorCode::ServiceNotReady => "SERVICE_NOT_READY",
            ErrorCode::Forbidden => "FORBIDDEN",
            ErrorCode::Unsupported => "UNSUPPORTED",
            ErrorCode::EngineError => "ENGINE_ERROR",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    /// For `DEVCONTAINER`: each thing the config asks that the host's trust has not
    /// granted, with the option that grants it (empty otherwise).
    pub refusals: Vec<crate::refusal::Refusal>,
    /// For an error libgit2 raised: its class and code as libgit2 gave them, so that a
    /// caller decides on them rather than on the message's words.
    pub git: Option<GitCause>,
}

/// libgit2's own classification of a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GitCause {
    pub class: git2::ErrorClass,
    pub code: git2::ErrorCode,
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            refusals: Vec::new(),
            git: None,
        }
    }

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidArgument, message)
    }

    pub fn timeout(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::Timeout, message)
    }

    /// libgit2's error while doing `what`, as `GIT`, its class and code kept.
    pub fn git(what: &str, err: git2::Error) -> Self {
        Error {
            git: Some(GitCause {
                class: err.class(),
                code: err.code(),
            }),
            ..Error::new(ErrorCode::Git, format!("{what}: {}", err.message()))
        }
    }

    /// libgit2's code, for an error libgit2 raised.
    pub fn git_code(&self) -> Option<git2::ErrorCode> {
        self.git.map(|cause| cause.code)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A foreign error's text with its causes: a Display (bollard's, reqwest's) stops at the
/// outermost layer; the cause (e.g. "Connection refused") is what a person needs, so walk
/// the source chain.
pub fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}
