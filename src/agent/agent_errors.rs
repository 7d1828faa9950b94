//! The agent's failures as this library's errors: an errno from the container's kernel
//! becomes the code Node would give, worded as the engine path words it.

use container_isolation_agent::protocol::Message;

use crate::error::{Error, ErrorCode};

pub fn errno_code(errno: i32) -> ErrorCode {
    match errno {
        libc::ENOENT => ErrorCode::Enoent,
        libc::EISDIR => ErrorCode::Eisdir,
        libc::ENOTDIR => ErrorCode::Enotdir,
        libc::EACCES | libc::EPERM | libc::EROFS => ErrorCode::Eacces,
        libc::EEXIST => ErrorCode::Eexist,
        libc::ELOOP => ErrorCode::Eloop,
        libc::ENAMETOOLONG => ErrorCode::Enametoolong,
        libc::EFBIG => ErrorCode::Efbig,
        libc::EINVAL => ErrorCode::InvalidArgument,
        _ => ErrorCode::EngineError,
    }
}

/// The kernel's words for the errors Node names.
fn wording(errno: i32) -> Option<&'static str> {
    Some(match errno {
        libc::ENOENT => "no such file or directory",
        libc::EISDIR => "illegal operation on a directory",
        libc::ENOTDIR => "not a directory",
        libc::EACCES | libc::EPERM => "permission denied",
        libc::EROFS => "read-only file system",
        libc::EEXIST => "file already exists",
        libc::ELOOP => "too many levels of symbolic links",
        libc::ENAMETOOLONG => "file name too long",
        _ => return None,
    })
}

/// `subject: reason` for a failure the agent reported with `errno` and `message`.
pub fn errno_error(errno: i32, subject: &str, message: &str) -> Error {
    let reason = wording(errno).map(str::to_string).unwrap_or_else(|| {
        let message: String = message.chars().take(512).collect();
        format!("{message} (errno {errno})")
    });
    Error::new(errno_code(errno), format!("{subject}: {reason}"))
}

/// A reply the protocol does not allow at this point (a broken or impersonated agent).
pub fn unexpected(subject: &str, message: &Message) -> Error {
    let shown: String = format!("{message:?}").chars().take(120).collect();
    Error::new(
        ErrorCode::EngineError,
        format!("{subject}: the session agent answered out of turn ({shown})"),
    )
}
