//! Running a command in a session Pod over the exec WebSocket with its output buffered.
//! A Kubernetes exec has no environment of its own and cannot be killed (as on the
//! engines), so the command runs under `env` with our token and the caller's variables,
//! and a timeout signals the token's tree from inside the Pod before the call rejects.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kube::api::{AttachParams, AttachedProcess};
use kube::Api;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::api_errors::from_kube;
use super::session_pod::CONTAINER;
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::exec::{subject, ExecOutcome, ExecRequest};
use crate::runtime::exec_token::{new_exec_token, token_entry};
use crate::runtime::process_kill::{in_container_signal_command, Signal};

/// The WebSocket's buffers per stream (kube's default is 1 KiB: one frame in flight).
const STREAM_BUFFER: usize = 1 << 20;
/// How long the output may go on arriving after the exec's status.
const DRAIN: Duration = Duration::from_secs(5);
/// How long a timed-out exec's kill may take before the call rejects anyway.
const KILL_BOUND: Duration = Duration::from_secs(2);

/// Runs `request` in the Pod's session container; a non-zero exit is a result.
/// `no_agent` says why the Pod's agent does not run it (for what only the agent can do).
pub async fn run_in_pod(
    pods: &Api<Pod>,
    pod: &str,
    request: &ExecRequest,
    no_agent: &str,
) -> Result<ExecOutcome> {
    request.check_command(pod)?;
    if request.user.as_deref().is_some_and(|u| !u.is_empty()) {
        return Err(Error::new(
            ErrorCode::Unsupported,
            format!(
                "{}: a user per exec needs the Pod's session agent (a plain Pod exec runs as the Pod's user), and {no_agent}",
                subject(pod, &request.command)
            ),
        ));
    }
    if request.command[0].contains('=') {
        return Err(Error::invalid_argument(format!(
            "{}: on Kubernetes the program name may not contain '=' (env would read it as a variable)",
            subject(pod, &request.command)
        )));
    }
    let token = new_exec_token();
    let argv = marked_argv(request, &token);
    let what = subject(pod, &request.command);
    let params = AttachParams::default()
        .container(CONTAINER)
        .stdin(request.stdin.is_some())
        .stdout(true)
        .stderr(true)
        .max_stdin_buf_size(STREAM_BUFFER)
        .max_stdout_buf_size(STREAM_BUFFER)
        .max_stderr_buf_size(STREAM_BUFFER);
    let process = pods
        .exec(pod, argv, &params)
        .await
        .map_err(|err| from_kube(err, &what, "create pods/exec"))?;
    let run = collect(process, request, &what);
    match request.timeout {
        None => run.await,
        Some(limit) => match tokio::time::timeout(limit, run).await {
            Ok(outcome) => outcome,
            Err(_) => {
                let kill = in_container_signal_command(&token, Signal::Kill);
                let pods = pods.clone();
                let pod_name = pod.to_string();
                let sent = tokio::spawn(async move { run_plain(&pods, &pod_name, kill).await });
                let _ = tokio::time::timeout(KILL_BOUND, sent).await;
                Err(Error::timeout(format!(
                    "{what} ran past its timeout of {} ms",
                    limit.as_millis()
                )))
            }
        },
    }
}

/// `env [-i] TOKEN VAR=value… command…`: the token marks the whole tree; `-i` for
/// `environmentMode: 'replace'`.
fn marked_argv(request: &ExecRequest, token: &str) -> Vec<String> {
    let mut argv = vec!["env".to_string()];
    if request.replace_env {
        argv.push("-i".to_string());
    }
    argv.push(token_entry(token));
    argv.extend(request.env.iter().map(|(k, v)| format!("{k}={v}")));
    argv.extend(request.command.iter().cloned());
    argv
}

/// Writes stdin, reads both streams to their ends (each kept up to the request's bound,
/// the rest read and dropped), then the exit code from the exec's status.
async fn collect(
    mut process: AttachedProcess,
    request: &ExecRequest,
    what: &str,
) -> Result<ExecOutcome> {
    let keep = request.kept_output();
    let stdin = process.stdin();
    let input = request.stdin.clone();
    // Beside the reading, and not waited for: a command that never reads its stdin (or
    // never started) must not hold the call.
    let writer = tokio::spawn(async move {
        if let (Some(mut stdin), Some(bytes)) = (stdin, input) {
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        }
    });
    let stdout = process.stdout();
    let stderr = process.stderr();
    let status = process.take_status();
    let mut output = tokio::spawn(async move {
        tokio::join!(read_bounded(stdout, keep), read_bounded(stderr, keep))
    });
    let status = async move {
        match status {
            Some(status) => status.await,
            None => None,
        }
    };
    tokio::pin!(status);
    // The status ends the call (the output that came before it is in the streams' buffers):
    // an exec that never started may leave its streams open.
    let (status, (out, err)) = tokio::select! {
        read = &mut output => (status.await, read.unwrap_or_default()),
        status = &mut status => {
            let drained = tokio::time::timeout(DRAIN, output).await;
            (status, drained.ok().and_then(|d| d.ok()).unwrap_or_default())
        }
    };
    writer.abort();
    process.abort();
    let Some(status) = status else {
        return Err(Error::new(
            ErrorCode::EngineUnavailable,
            format!("{what}: the exec stream ended without an exit status (the node or the API server went away)"),
        ));
    };
    Ok(ExecOutcome {
        stdout: out,
        stderr: err,
        exit_code: exit_code(&status, what)?,
    })
}

async fn read_bounded(reader: Option<impl AsyncRead + Unpin>, keep: usize) -> Vec<u8> {
    let Some(mut reader) = reader else {
        return Vec::new();
    };
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = keep.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// The exec's status: `Success`, or `NonZeroExitCode` with the code in its causes (a
/// program `env` cannot find is its 127). Any other failure is the cluster's, not the
/// command's (the API server could not reach the node's kubelet, the runtime could not
/// start the exec): an error, never an exit code.
fn exit_code(status: &Status, what: &str) -> Result<i64> {
    if status.status.as_deref() == Some("Success") {
        return Ok(0);
    }
    let causes = status
        .details
        .as_ref()
        .and_then(|d| d.causes.as_deref())
        .unwrap_or_default();
    if let Some(code) = causes
        .iter()
        .find(|c| c.reason.as_deref() == Some("ExitCode"))
        .and_then(|c| c.message.as_deref()?.parse::<i64>().ok())
    {
        return Ok(code);
    }
    let message = status.message.as_deref().unwrap_or("no message");
    let code = match status.code {
        Some(code) if code < 500 => ErrorCode::EngineError,
        _ => ErrorCode::EngineUnavailable,
    };
    Err(Error::new(
        code,
        format!("{what}: the cluster could not run it: {message}"),
    ))
}

/// Runs `argv` as is (no token), for the library's own commands; the output is dropped.
pub async fn run_plain(pods: &Api<Pod>, pod: &str, argv: Vec<String>) -> Result<i64> {
    Ok(run_plain_with(pods, pod, argv, None).await?.exit_code)
}

/// Runs `argv` as is (no token) with `stdin` written and closed; its output kept (64 KiB).
pub async fn run_plain_with(
    pods: &Api<Pod>,
    pod: &str,
    argv: Vec<String>,
    stdin: Option<Vec<u8>>,
) -> Result<ExecOutcome> {
    let what = subject(pod, &argv);
    let params = AttachParams::default()
        .container(CONTAINER)
        .stdin(stdin.is_some())
        .stdout(true)
        .stderr(true)
        .max_stdin_buf_size(STREAM_BUFFER);
    let process = pods
        .exec(pod, argv, &params)
        .await
        .map_err(|err| from_kube(err, &what, "create pods/exec"))?;
    let request = ExecRequest {
        stdin,
        output_limit: Some(64 << 10),
        ..Default::default()
    };
    collect(process, &request, &what).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_and_variables_go_through_env() {
        let request = ExecRequest {
            command: vec!["x".into()],
            env: [("K".to_string(), "v w".to_string())].into(),
            replace_env: true,
            ..Default::default()
        };
        let argv = marked_argv(&request, "t0k");
        assert_eq!(argv[..3], ["env", "-i", "CONTAINER_ISOLATION_EXEC=t0k"]);
        assert_eq!(argv[3], "K=v w");
        assert_eq!(argv[4..], ["x"]);
    }

    #[test]
    fn exit_codes_from_status() {
        let success: Status =
            serde_json::from_value(serde_json::json!({"status": "Success"})).unwrap();
        assert_eq!(exit_code(&success, "x").unwrap(), 0);
        let failed: Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "reason": "NonZeroExitCode",
            "message": "command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3",
            "details": {"causes": [{"reason": "ExitCode", "message": "3"}]}
        }))
        .unwrap();
        assert_eq!(exit_code(&failed, "x").unwrap(), 3);
        let unreachable: Status = serde_json::from_value(serde_json::json!({
            "status": "Failure", "code": 500,
            "message": "error dialing backend: dial tcp 10.1.2.3:10250: connect: connection refused"
        }))
        .unwrap();
        let err = exit_code(&unreachable, "exec 'true' in container 'a'").unwrap_err();
        assert_eq!(err.code, ErrorCode::EngineUnavailable);
        assert!(
            err.message.contains("error dialing backend"),
            "{}",
            err.message
        );
    }
}
