//! `AppleContainerRuntime`: Lace's `ContainerRuntime` on macOS through Apple's `container`
//! CLI (argv, never a shell string). Signal forwarding through `container exec` is broken
//! (apple/container#1941), so a timed-out exec is killed from inside the container.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use super::cli_args::{create_args, exec_args, stop_args, PROGRAM};
use super::inspect_json::{parse, AppleContainer};
use crate::base_dir::resolve_base_dir;
use crate::container_runtime::labels_for_new_container;
use crate::container_runtime::{ContainerConfig, ContainerRuntime};
use crate::error::{Error, ErrorCode, Result};
use crate::output::{OutputDecoder, OutputLine, StreamKind};
use crate::runtime::ensure_mount_source;
use crate::runtime::exec_token::new_exec_token;
use crate::runtime::labels;
use crate::runtime::process_kill::{in_container_signal_command, Signal};
use crate::runtime::{
    ContainerInfo, ContainerState, Direction, ExecOutcome, ExecRequest, KnownMounts, LogsRequest,
};

const DEFAULT_STOP: Duration = Duration::from_secs(5);
const CLI_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, Clone, Default)]
pub struct AppleRuntimeOptions {
    /// The `container` executable; default `container` on PATH.
    pub program: Option<String>,
    pub image: Option<String>,
    pub base_dir: Option<String>,
}

pub struct AppleContainerRuntime {
    program: PathBuf,
    default_image: Option<String>,
    base_dir: PathBuf,
    mounts: KnownMounts,
}

struct CliOutput {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// The code a failed CLI call stands for, from its words.
fn classify(stderr: &str) -> ErrorCode {
    let lower = stderr.to_ascii_lowercase();
    if lower.contains("not found") && (lower.contains("image") || lower.contains("reference")) {
        ErrorCode::ImageNotFound
    } else if lower.contains("not found") || lower.contains("no such") || lower.contains("notfound")
    {
        ErrorCode::ContainerNotFound
    } else if lower.contains("not running") || lower.contains("is stopped") {
        ErrorCode::ContainerNotRunning
    } else if lower.contains("already exists") {
        ErrorCode::Eexist
    } else {
        ErrorCode::EngineError
    }
}

impl AppleContainerRuntime {
    pub fn new(options: AppleRuntimeOptions) -> Self {
        AppleContainerRuntime {
            program: PathBuf::from(options.program.unwrap_or_else(|| PROGRAM.into())),
            default_image: options.image,
            base_dir: resolve_base_dir(options.base_dir.as_deref()),
            mounts: KnownMounts::default(),
        }
    }

    /// Starts the CLI with stdout and stderr piped (and stdin, if `stdin`); it is killed
    /// when the returned child is dropped.
    fn spawn(&self, args: &[String], stdin: bool) -> Result<Child> {
        Command::new(&self.program)
            .args(args)
            .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                Error::new(
                    ErrorCode::EngineUnavailable,
                    format!(
                        "cannot run Apple's container CLI ({}): {e}",
                        self.program.display()
                    ),
                )
            })
    }

    async fn cli(
        &self,
        args: &[String],
        stdin: Option<&[u8]>,
        limit: Duration,
    ) -> Result<CliOutput> {
        let shown = format!(
            "{} {}",
            self.program.display(),
            args.first().map(String::as_str).unwrap_or("")
        );
        let mut child = self.spawn(args, stdin.is_some())?;
        if let (Some(bytes), Some(mut input)) = (stdin, child.stdin.take()) {
            let bytes = bytes.to_vec();
            tokio::spawn(async move {
                let _ = input.write_all(&bytes).await;
            });
        }
        let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
        let collect = async {
            let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
            if let Some(o) = out.as_mut() {
                let _ = o.read_to_end(&mut stdout).await;
            }
            if let Some(e) = err.as_mut() {
                let _ = e.read_to_end(&mut stderr).await;
            }
            let status = child.wait().await;
            (status, stdout, stderr)
        };
        let (status, stdout, stderr) = tokio::time::timeout(limit, collect)
            .await
            .map_err(|_| Error::timeout(format!("`{shown}` ran past {} ms", limit.as_millis())))?;
        let code = status.map(|s| s.code().unwrap_or(128 + 9)).unwrap_or(-1);
        Ok(CliOutput {
            code,
            stdout,
            stderr,
        })
    }

    /// A CLI call that must succeed; its stderr becomes the error message.
    async fn checked(&self, args: Vec<String>, subject: &str) -> Result<CliOutput> {
        let out = self.cli(&args, None, CLI_TIMEOUT).await?;
        if out.code != 0 {
            let text = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err(Error::new(classify(&text), format!("{subject}: {text}")));
        }
        Ok(out)
    }

    async fn inspect_one(&self, id: &str) -> Result<AppleContainer> {
        let what = format!("container '{id}'");
        let out = self
            .checked(vec!["inspect".into(), id.into()], &what)
            .await?;
        parse(&String::from_utf8_lossy(&out.stdout), &what)?
            .into_iter()
            .next()
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::ContainerNotFound,
                    format!("{what}: no such container"),
                )
            })
    }
}

/// What Apple's CLI has no option for: refused at create rather than dropped.
fn unsupported_by_cli(config: &ContainerConfig) -> Result<()> {
    let restarts = config
        .restart_policy
        .is_some_and(|p| p != crate::container_runtime::RestartPolicy::No);
    let what = match () {
        _ if restarts => "restartPolicy",
        _ if !config.sysctls.is_empty() => "sysctls",
        _ if !config.resources.is_empty() => "resources",
        _ => return Ok(()),
    };
    Err(Error::invalid_argument(format!(
        "{what} is not supported by Apple's container CLI"
    )))
}

impl ContainerRuntime for AppleContainerRuntime {
    async fn create(&self, config: ContainerConfig) -> Result<String> {
        let (name, image) = config.name_and_image(self.default_image.as_deref())?;
        unsupported_by_cli(&config)?;
        for mount in &config.mounts {
            ensure_mount_source(&mount.source, &name).await?;
        }
        let labels = labels_for_new_container(&config, &name, &image, &self.base_dir);
        let process = config
            .command
            .clone()
            .unwrap_or_else(crate::runtime::sandbox_command);
        let args = create_args(&config, &name, &image, &labels, &process);
        self.checked(args, &format!("container '{name}' from image '{image}'"))
            .await?;
        self.mounts.remember(&[&name], config.mounts.clone());
        Ok(name)
    }

    async fn start(&self, id: &str) -> Result<()> {
        if self.inspect(id).await?.state == ContainerState::Running {
            return Ok(());
        }
        self.checked(
            vec!["start".into(), id.into()],
            &format!("container '{id}'"),
        )
        .await
        .map(|_| ())
    }

    async fn stop(&self, id: &str, grace: Option<Duration>) -> Result<()> {
        self.checked(
            stop_args(id, grace.unwrap_or(DEFAULT_STOP)),
            &format!("container '{id}'"),
        )
        .await
        .map(|_| ())
    }

    async fn remove(&self, id: &str) -> Result<()> {
        if self.inspect(id).await?.state == ContainerState::Running {
            self.stop(id, None).await?;
        }
        self.checked(
            vec!["delete".into(), "--force".into(), id.into()],
            &format!("container '{id}'"),
        )
        .await?;
        self.mounts.forget(&[id]);
        Ok(())
    }

    /// Buffered; a non-zero exit is a result. On `timeout` the command's processes are
    /// killed from inside the container (by the token in their environment).
    async fn exec(&self, id: &str, request: ExecRequest) -> Result<ExecOutcome> {
        request.check_command(id)?;
        let token = new_exec_token();
        let (command, env) = request.marked_command(&token, id)?;
        let args = exec_args(
            id,
            &command,
            request.working_dir.as_deref(),
            &env,
            request.user.as_deref(),
            request.stdin.is_some(),
        );
        let limit = request.timeout.unwrap_or(Duration::from_secs(24 * 3600));
        match self.cli(&args, request.stdin.as_deref(), limit).await {
            Ok(out) => Ok(ExecOutcome {
                stdout: out.stdout,
                stderr: out.stderr,
                exit_code: i64::from(out.code),
            }),
            Err(err) if err.code == ErrorCode::Timeout => {
                let kill = in_container_signal_command(&token, Signal::Kill);
                let _ = self
                    .cli(
                        &exec_args(id, &kill, None, &BTreeMap::new(), Some("0"), false),
                        None,
                        CLI_TIMEOUT,
                    )
                    .await;
                Err(Error::timeout(format!(
                    "exec {:?} in container '{id}' ran past its timeout of {} ms and was killed inside the container",
                    request.command.join(" "),
                    limit.as_millis()
                )))
            }
            Err(err) => Err(err),
        }
    }

    async fn inspect(&self, id: &str) -> Result<ContainerInfo> {
        let found = self.inspect_one(id).await?;
        self.mounts
            .remember(&[&found.info.id], found.mounts.clone());
        Ok(found.info)
    }

    /// `container list` cannot filter by label: filtered here by our labels and base dir.
    async fn list(&self) -> Result<Vec<ContainerInfo>> {
        let args = ["list", "--all", "--format", "json"]
            .map(String::from)
            .to_vec();
        let out = self.checked(args, "list of containers").await?;
        let base_dir = self.base_dir.to_string_lossy().into_owned();
        Ok(
            parse(&String::from_utf8_lossy(&out.stdout), "list of containers")?
                .into_iter()
                .filter(|c| {
                    c.info.labels.get(labels::MANAGED).map(String::as_str) == Some("true")
                        && c.info.labels.get(labels::BASE_DIR) == Some(&base_dir)
                })
                .map(|c| {
                    self.mounts.remember(&[&c.info.id], c.mounts.clone());
                    c.info
                })
                .collect(),
        )
    }

    /// The CLI has no wait: the container is polled until its main process has exited.
    async fn wait(&self, id: &str) -> Result<i64> {
        loop {
            let info = self.inspect(id).await?;
            if !matches!(
                info.state,
                ContainerState::Running | ContainerState::Created
            ) {
                return Ok(info.exit_code.unwrap_or(0));
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The CLI prints the container's output on its stdout, already merged; it has no
    /// `--since`, so `request.since_ms` is ignored.
    async fn logs(
        &self,
        id: &str,
        request: LogsRequest,
        mut on_line: impl FnMut(OutputLine) + Send,
    ) -> Result<()> {
        let mut args = vec!["logs".to_string()];
        if request.follow {
            args.push("--follow".into());
        }
        args.push(id.into());
        let mut child = self.spawn(&args, false)?;
        let mut stdout = child
            .stdout
            .take()
            .ok_or_else(|| Error::new(ErrorCode::EngineError, "no stdout"))?;
        let mut decoder = OutputDecoder::new();
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = stdout.read(&mut buf).await.map_err(|e| {
                Error::new(
                    ErrorCode::EngineError,
                    format!("logs of container '{id}': {e}"),
                )
            })?;
            if n == 0 {
                break;
            }
            decoder.push(StreamKind::Stdout, &buf[..n], &mut on_line);
        }
        decoder.finish(&mut on_line);
        let mut stderr = Vec::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_end(&mut stderr).await;
        }
        let status = child
            .wait()
            .await
            .map_err(|e| Error::new(ErrorCode::EngineError, e.to_string()))?;
        if !status.success() {
            let text = String::from_utf8_lossy(&stderr).trim().to_string();
            return Err(Error::new(
                classify(&text),
                format!("logs of container '{id}': {text}"),
            ));
        }
        Ok(())
    }

    fn translate(&self, path: &str, id: &str, direction: Direction) -> Result<String> {
        self.mounts.translate(path, id, direction)
    }
}

#[cfg(test)]
#[path = "apple_runtime_tests.rs"]
mod tests;
