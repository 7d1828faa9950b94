//! Running a docker credential helper as docker runs it: `<program> get`, the registry's
//! server URL on stdin, argv only (no shell), in its own process group, bounded in time
//! (the group killed after) and in output. Its answer is `{ServerURL, Username, Secret}`;
//! none of its output ever reaches a message.

use std::ffi::OsStr;
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::error::{Error, ErrorCode};

pub const HELPER_TIMEOUT: Duration = Duration::from_secs(10);
pub const HELPER_OUTPUT_LIMIT: usize = 64 * 1024;

/// What helpers print (and exit non-zero with) when they hold nothing for the server.
const NOT_FOUND: &str = "credentials not found";

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct HelperAnswer {
    pub username: String,
    pub secret: String,
}

/// Why a helper gave no credentials.
#[derive(Debug, PartialEq, Eq)]
pub enum HelperFailure {
    NotRunnable(String),
    TimedOut,
    TooMuchOutput,
    Exited(String),
    Garbage,
}

impl HelperFailure {
    /// The coded error, naming the helper, the config field that chose it and the registry.
    pub fn into_error(self, program: &str, origin: &str, host: &str) -> Error {
        let what = format!(
            "credential helper {program} ({origin} of the docker config) for registry {host}"
        );
        match self {
            HelperFailure::TimedOut => Error::timeout(format!(
                "{what}: no answer within {} s; it was killed",
                HELPER_TIMEOUT.as_secs()
            )),
            other => {
                let why = match other {
                    HelperFailure::NotRunnable(e) => format!("cannot be run: {e}"),
                    HelperFailure::TooMuchOutput => {
                        format!("printed more than {HELPER_OUTPUT_LIMIT} bytes")
                    }
                    HelperFailure::Exited(status) => format!("failed ({status})"),
                    _ => "did not answer with credentials as JSON ({ServerURL, Username, Secret})"
                        .to_string(),
                };
                Error::new(ErrorCode::RegistryAuth, format!("{what}: {why}"))
            }
        }
    }
}

/// Kills the helper's whole process group (it may have started children that hold its
/// output open).
fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill has no memory preconditions; the group is the helper's own.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// `program get` for `server_url`: `Ok(None)` when the helper holds nothing for it.
pub async fn run_helper(
    program: &OsStr,
    server_url: &str,
    timeout: Duration,
) -> Result<Option<HelperAnswer>, HelperFailure> {
    let mut child = tokio::process::Command::new(program)
        .arg("get")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| HelperFailure::NotRunnable(e.kind().to_string()))?;
    let pid = child.id();
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        kill_group(pid);
        return Err(HelperFailure::NotRunnable("no pipes".into()));
    };
    let talk = async {
        // A helper that exits without reading its input is judged by its answer.
        let _ = stdin.write_all(server_url.as_bytes()).await;
        drop(stdin);
        let mut out = Vec::new();
        stdout
            .take(HELPER_OUTPUT_LIMIT as u64 + 1)
            .read_to_end(&mut out)
            .await
            .map_err(|e| HelperFailure::NotRunnable(e.to_string()))?;
        if out.len() > HELPER_OUTPUT_LIMIT {
            return Err(HelperFailure::TooMuchOutput);
        }
        let status = child
            .wait()
            .await
            .map_err(|e| HelperFailure::NotRunnable(e.to_string()))?;
        Ok((status, out))
    };
    let answered = tokio::time::timeout(timeout, talk).await;
    let (status, out) = match answered {
        Ok(Ok(done)) => done,
        Ok(Err(failure)) => {
            kill_group(pid);
            return Err(failure);
        }
        Err(_) => {
            kill_group(pid);
            return Err(HelperFailure::TimedOut);
        }
    };
    kill_group(pid);
    if !status.success() {
        if String::from_utf8_lossy(&out).contains(NOT_FOUND) {
            return Ok(None);
        }
        return Err(HelperFailure::Exited(status.to_string()));
    }
    serde_json::from_slice::<HelperAnswer>(&out)
        .map(Some)
        .map_err(|_| HelperFailure::Garbage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::PathBuf;

    /// A helper script in its own directory (removed by the caller).
    fn helper(body: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("ci-helper-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir(&dir).unwrap();
        let path = dir.join("docker-credential-test");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        (dir, path)
    }

    async fn run(body: &str) -> Result<Option<HelperAnswer>, HelperFailure> {
        let (dir, path) = helper(body);
        let out = run_helper(
            path.as_os_str(),
            "127.0.0.1:5000",
            Duration::from_millis(700),
        )
        .await;
        std::fs::remove_dir_all(dir).unwrap();
        out
    }

    #[tokio::test]
    async fn the_server_url_goes_in_on_stdin_and_the_answer_is_parsed() {
        let found = run(r#"[ "$1" = get ] || exit 3
read -r url
printf '{"ServerURL":"%s","Username":"u-%s","Secret":"s"}' "$url" "$url""#)
        .await
        .unwrap()
        .unwrap();
        assert_eq!(
            (found.username.as_str(), found.secret.as_str()),
            ("u-127.0.0.1:5000", "s")
        );
        let none = run("echo 'credentials not found in native keychain'; exit 1").await;
        assert!(matches!(none, Ok(None)));
    }

    #[tokio::test]
    async fn hanging_flooding_failing_and_garbage_helpers_are_refused() {
        let started = std::time::Instant::now();
        // A child holding stdout open must not keep the call waiting either.
        assert_eq!(
            run("sleep 30 & sleep 30").await.err(),
            Some(HelperFailure::TimedOut)
        );
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(
            run("head -c 200000 /dev/zero").await.err(),
            Some(HelperFailure::TooMuchOutput)
        );
        assert!(matches!(
            run("echo boom; exit 2").await,
            Err(HelperFailure::Exited(_))
        ));
        assert_eq!(
            run("echo 'not json'").await.err(),
            Some(HelperFailure::Garbage)
        );
        let missing = run_helper(
            OsStr::new("docker-credential-surely-not-installed"),
            "x",
            Duration::from_secs(1),
        )
        .await;
        assert!(matches!(missing, Err(HelperFailure::NotRunnable(_))));
        let err = HelperFailure::Garbage.into_error("docker-credential-x", "credsStore", "r:5");
        assert_eq!(err.code, ErrorCode::RegistryAuth);
        assert!(err.message.contains("docker-credential-x") && err.message.contains("r:5"));
    }
}
