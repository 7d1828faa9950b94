//! The bridge from bollard to an `ssh://` engine: a unix socket in a private folder, where
//! each accepted connection gets its own `ssh … docker system dial-stdio` child piping both
//! ways, as the docker CLI does. The system `ssh` client is used so that `~/.ssh/config`,
//! agents and known_hosts behave as users expect.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::process::Command;
use tokio::task::{JoinHandle, JoinSet};

use super::ssh_target::SshTarget;
use crate::error::{Error, ErrorCode, Result};

/// The most of ssh's error output kept for error messages.
const STDERR_KEPT: usize = 4096;

/// Lives as long as the engine that uses it; dropping it ends every ssh child.
pub struct SshTunnel {
    folder: PathBuf,
    socket: PathBuf,
    accept: JoinHandle<()>,
    stderr: Arc<Mutex<String>>,
}

impl SshTunnel {
    pub fn open(target: &SshTarget, connect_timeout: Duration) -> Result<SshTunnel> {
        let argv = target.argv(connect_timeout)?;
        let folder = private_folder()?;
        let socket = folder.join("engine.sock");
        let listener = UnixListener::bind(&socket).map_err(|e| {
            let _ = std::fs::remove_dir_all(&folder);
            unavailable(format!("cannot listen on {}: {e}", socket.display()))
        })?;
        let stderr = Arc::new(Mutex::new(String::new()));
        let accept = tokio::spawn(accept_loop(listener, argv, stderr.clone()));
        Ok(SshTunnel {
            folder,
            socket,
            accept,
            stderr,
        })
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// What ssh last wrote to its error output (e.g. "Permission denied (publickey)").
    pub fn last_stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .trim()
            .to_string()
    }
}

impl Drop for SshTunnel {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

fn unavailable(message: String) -> Error {
    Error::new(ErrorCode::EngineUnavailable, message)
}

fn private_folder() -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    let folder = base.join(format!("ci-ssh-{}", uuid::Uuid::new_v4().simple()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&folder)
        .map_err(|e| unavailable(format!("cannot create {}: {e}", folder.display())))?;
    Ok(folder)
}

/// Aborting this task drops the set, which aborts every connection and so kills its child.
async fn accept_loop(listener: UnixListener, argv: Vec<String>, stderr: Arc<Mutex<String>>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(bridge(stream, argv.clone(), stderr.clone()));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn bridge(mut stream: UnixStream, argv: Vec<String>, stderr: Arc<Mutex<String>>) {
    let spawned = Command::new("ssh")
        .args(&argv)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            keep(&stderr, &format!("cannot run ssh: {e}"));
            return;
        }
    };
    let (Some(stdin), Some(stdout), Some(mut err_pipe)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return;
    };
    let errors = tokio::spawn(async move {
        let mut text = Vec::new();
        let _ = (&mut err_pipe)
            .take(STDERR_KEPT as u64)
            .read_to_end(&mut text)
            .await;
        text
    });
    let mut pipe = tokio::io::join(stdout, stdin);
    let _ = tokio::io::copy_bidirectional(&mut stream, &mut pipe).await;
    drop(pipe);
    let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
    let _ = child.start_kill();
    if let Ok(Ok(text)) = tokio::time::timeout(Duration::from_secs(1), errors).await {
        let text = String::from_utf8_lossy(&text);
        if !text.trim().is_empty() {
            keep(&stderr, &text);
        }
    }
}

fn keep(stderr: &Mutex<String>, text: &str) {
    let mut kept = stderr.lock().unwrap_or_else(|e| e.into_inner());
    *kept = text.chars().take(STDERR_KEPT).collect();
}
