//! Turns bollard's errors into the library's coded errors, naming what the call was about.

use bollard::errors::Error as BollardError;

use crate::error::{describe, Error, ErrorCode};

/// Maps an Engine API failure. `subject` names the container, image or path involved,
/// e.g. `container 'ci-1a2b3c4d'`.
pub fn from_bollard(err: BollardError, subject: &str) -> Error {
    match err {
        BollardError::DockerResponseServerError {
            status_code,
            message,
        } => {
            let code = code_for_status(status_code, &message);
            Error::new(code, format!("{subject}: {}", message.trim()))
        }
        BollardError::RequestTimeoutError => Error::new(
            ErrorCode::Timeout,
            format!("{subject}: the engine did not answer in time"),
        ),
        BollardError::SocketNotFoundError(path) => Error::new(
            ErrorCode::EngineUnavailable,
            format!("{subject}: engine socket {path} does not exist"),
        ),
        BollardError::DockerContainerWaitError { error, code } => Error::new(
            ErrorCode::EngineError,
            format!("{subject}: wait failed with exit code {code}: {error}"),
        ),
        other if is_connection_failure(&other) => Error::new(
            ErrorCode::EngineUnavailable,
            format!("{subject}: cannot reach the engine: {}", describe(&other)),
        ),
        other => Error::new(
            ErrorCode::EngineError,
            format!("{subject}: {}", describe(&other)),
        ),
    }
}

/// The code a server error stands for: its status decides first. Words are read only
/// within a status that stands for several things, where the engines say which in words
/// alone: what a 404 is about (dockerd "No such container" / "No such image", Podman "no
/// such container" / "image not known"), what a 409 conflicts with (a name in use, a
/// container not running), and Podman's 500s for what dockerd answers with a 404 or a 409.
pub fn code_for_status(status: u16, message: &str) -> ErrorCode {
    let lower = message.to_ascii_lowercase();
    let says = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    let not_running = [
        "container state improper",
        "can only create exec sessions on running containers",
    ];
    match status {
        400 => ErrorCode::InvalidArgument,
        404 if says(&[
            "no such image",
            "image not known",
            "unable to find image",
            "pull access denied",
        ]) =>
        {
            ErrorCode::ImageNotFound
        }
        404 if says(&["no such container"]) => ErrorCode::ContainerNotFound,
        404 if says(&["no such exec"]) => ErrorCode::EngineError,
        404 => ErrorCode::Enoent,
        409 | 500 if says(&["already in use"]) => ErrorCode::Eexist,
        409 | 500 if says(&not_running) => ErrorCode::ContainerNotRunning,
        409 if says(&["not running", "is paused"]) => ErrorCode::ContainerNotRunning,
        // Podman, while another client removes the container.
        500 if says(&["does not exist in database: no such container"]) => {
            ErrorCode::ContainerNotFound
        }
        _ => ErrorCode::EngineError,
    }
}

fn is_connection_failure(err: &BollardError) -> bool {
    matches!(
        err,
        BollardError::IOError { .. }
            | BollardError::HyperResponseError { .. }
            | BollardError::HyperLegacyError { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_and_podman_wordings_map_to_the_same_codes() {
        assert_eq!(
            code_for_status(404, "No such container: x"),
            ErrorCode::ContainerNotFound
        );
        assert_eq!(
            code_for_status(
                404,
                "no container with name or ID \"x\" found: no such container"
            ),
            ErrorCode::ContainerNotFound
        );
        assert_eq!(
            code_for_status(404, "No such image: nope:latest"),
            ErrorCode::ImageNotFound
        );
        assert_eq!(
            code_for_status(404, "nope: image not known"),
            ErrorCode::ImageNotFound
        );
        assert_eq!(
            code_for_status(409, "Container abc is not running"),
            ErrorCode::ContainerNotRunning
        );
        assert_eq!(
            code_for_status(
                500,
                "container 379f does not exist in database: no such container"
            ),
            ErrorCode::ContainerNotFound
        );
        assert_eq!(
            code_for_status(404, "Could not find the file /x in container y"),
            ErrorCode::Enoent
        );
        assert_eq!(code_for_status(500, "boom"), ErrorCode::EngineError);
        assert_eq!(
            code_for_status(409, "Conflict. The container name \"/x\" is already in use"),
            ErrorCode::Eexist
        );
        assert_eq!(
            code_for_status(500, "the container name \"x\" is already in use by f4e8"),
            ErrorCode::Eexist
        );
        assert_eq!(
            code_for_status(
                500,
                "can only create exec sessions on running containers: container state improper"
            ),
            ErrorCode::ContainerNotRunning
        );
    }

    #[test]
    fn server_errors_name_the_subject() {
        let err = from_bollard(
            BollardError::DockerResponseServerError {
                status_code: 404,
                message: "No such container: abc".into(),
            },
            "container 'abc'",
        );
        assert_eq!(err.code, ErrorCode::ContainerNotFound);
        assert_eq!(err.message, "container 'abc': No such container: abc");
    }
}
