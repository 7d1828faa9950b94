//! The cluster's answers as the library's error codes: decided on the HTTP status and the
//! API's own reason, never on message text.

use crate::error::{Error, ErrorCode};

/// `subject` names what was asked ("create Pod 'x' in namespace 'y'"); `permission` the
/// verb and resource a 403 means the Role lacks ("create pods").
pub fn from_kube(err: kube::Error, subject: &str, permission: &str) -> Error {
    match err {
        kube::Error::Api(status) => from_status(
            status.code,
            &status.reason,
            &status.message,
            subject,
            permission,
        ),
        kube::Error::UpgradeConnection(kube::client::UpgradeConnectionError::ProtocolSwitch(
            code,
        )) => from_status(
            code.as_u16(),
            "",
            "the connection upgrade was refused",
            subject,
            permission,
        ),
        kube::Error::HyperError(_) | kube::Error::Service(_) => Error::new(
            ErrorCode::EngineUnavailable,
            format!("{subject}: the Kubernetes API server did not answer: {err}"),
        ),
        other => Error::new(ErrorCode::EngineError, format!("{subject}: {other}")),
    }
}

fn from_status(code: u16, reason: &str, message: &str, subject: &str, permission: &str) -> Error {
    let (code, text) = match code {
        403 => (
            ErrorCode::Forbidden,
            format!("{subject}: forbidden: the credentials may not {permission} (the Role in deploy/kubernetes/role.yaml grants it): {message}"),
        ),
        404 => (ErrorCode::ContainerNotFound, format!("{subject}: not found: {message}")),
        409 => (ErrorCode::Eexist, format!("{subject}: already exists: {message}")),
        401 => (
            ErrorCode::EngineUnavailable,
            format!("{subject}: the API server refused the credentials (401 {reason}): {message}"),
        ),
        408 | 504 => (ErrorCode::Timeout, format!("{subject}: {reason}: {message}")),
        422 | 400 => (ErrorCode::InvalidArgument, format!("{subject}: the API server refused it ({reason}): {message}")),
        500..=599 => (
            ErrorCode::EngineUnavailable,
            format!("{subject}: the API server failed ({code} {reason}): {message}"),
        ),
        _ => (ErrorCode::EngineError, format!("{subject}: {code} {reason}: {message}")),
    };
    Error::new(code, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_codes() {
        let forbidden = from_status(
            403,
            "Forbidden",
            "pods/exec is forbidden",
            "exec in Pod 'a'",
            "create pods/exec",
        );
        assert_eq!(forbidden.code, ErrorCode::Forbidden);
        assert!(
            forbidden.message.contains("create pods/exec"),
            "{}",
            forbidden.message
        );
        assert_eq!(
            from_status(404, "NotFound", "", "s", "p").code,
            ErrorCode::ContainerNotFound
        );
        assert_eq!(
            from_status(409, "AlreadyExists", "", "s", "p").code,
            ErrorCode::Eexist
        );
        assert_eq!(
            from_status(422, "Invalid", "", "s", "p").code,
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            from_status(503, "ServiceUnavailable", "", "s", "p").code,
            ErrorCode::EngineUnavailable
        );
        assert_eq!(
            from_status(418, "Teapot", "", "s", "p").code,
            ErrorCode::EngineError
        );
    }
}
