//! The bridge from bollard to an `ssh://` engine: a unix socket in a private folder, where
//! each accepted connection gets its own `ssh … docker system dial-stdio` child piping both
//! ways, as the docker CLI does. The system `ssh` client is used so that `~/.ssh/config`,
//! agents and known_hosts behave as users expect. The children share ssh connections
//! (control masters in the private folder, ended with the tunnel): every exec and attach
//! takes a connection of its own, and a log-in for each would cost a second or more. A
//! master carries at most `SESSIONS_PER_MASTER` of them, under sshd's default `MaxSessions`
//! (10), beyond which sshd refuses a session; more connections open another master.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::process::Command;
use tokio::task::{JoinHandle, JoinSet};

use super::ssh_target::SshTarget;
use crate::error::{Error, ErrorCode, Result};

/// The most of ssh's error output kept for error messages.
const STDERR_KEPT: usize = 4096;
/// How long the shared connection outlives its last user should the tunnel not end it
/// (this process killed).
const CONTROL_PERSIST: &str = "ControlPersist=60";
/// Connections one shared ssh connection carries at once.
const SESSIONS_PER_MASTER: usize = 8;

/// Lives as long as the engine that uses it; dropping it ends every ssh child.
pub struct SshTunnel {
    folder: PathBuf,
    masters: Arc<Masters>,
    host: String,
    socket: PathBuf,
    accept: JoinHandle<()>,
    stderr: Arc<Mutex<String>>,
}

impl SshTunnel {
    pub fn open(target: &SshTarget, connect_timeout: Duration) -> Result<SshTunnel> {
        let folder = private_folder()?;
        let socket = folder.join("engine.sock");
        let argv = target.argv(connect_timeout).inspect_err(|_| {
            let _ = std::fs::remove_dir_all(&folder);
        })?;
        let listener = UnixListener::bind(&socket).map_err(|e| {
            let _ = std::fs::remove_dir_all(&folder);
            unavailable(format!("cannot listen on {}: {e}", socket.display()))
        })?;
        let stderr = Arc::new(Mutex::new(String::new()));
        let masters = Arc::new(Masters::new(folder.clone()));
        let accept = tokio::spawn(accept_loop(listener, argv, masters.clone(), stderr.clone()));
        Ok(SshTunnel {
            folder,
            masters,
            host: target.host.clone(),
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
    /// Ends the children, then (on a thread of its own, as it waits for ssh) the shared
    /// connection, then removes the folder.
    fn drop(&mut self) {
        self.accept.abort();
        let (folder, host) = (self.folder.clone(), self.host.clone());
        let controls = self.masters.paths();
        std::thread::spawn(move || {
            for control in controls.iter().filter(|c| c.exists()) {
                let _ = std::process::Command::new("ssh")
                    .arg("-o")
                    .arg(format!("ControlPath={}", control.display()))
                    .args(["-o", "BatchMode=yes", "-O", "exit", "--", &host])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
            let _ = std::fs::remove_dir_all(&folder);
        });
    }
}

fn unavailable(message: String) -> Error {
    Error::new(ErrorCode::EngineUnavailable, message)
}

/// `ci-ssh-<pid>-<random>`, mode 0700, in `$XDG_RUNTIME_DIR` (else the temp folder, see
/// `folder_base`); the folders of processes that are gone (killed before their tunnels
/// ended) are removed first.
fn private_folder() -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let name = format!(
        "ci-ssh-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    );
    let runtime_dir = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_dir());
    let base = folder_base(runtime_dir, std::env::temp_dir(), &name);
    sweep_abandoned(&base);
    let folder = base.join(name);
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&folder)
        .map_err(|e| unavailable(format!("cannot create {}: {e}", folder.display())))?;
    Ok(folder)
}

/// The longest socket name in the folder: ssh binds its master's `mux-<n>` under a name
/// 17 bytes longer (`.` and 16 random characters) before renaming it.
const LONGEST_SOCKET_NAME: &str = "/mux-9999.0123456789abcdef";

/// The first of `runtime_dir` and `temp` under which every socket of a folder `name` fits a
/// unix socket's address (`sun_path`: 108 bytes on Linux, 104 on macOS), else `/tmp`. On
/// macOS, where `$XDG_RUNTIME_DIR` is unset and the per-user temp folder is
/// `/var/folders/<2>/<30>/T/`, the sockets would not fit: there the folder goes to `/tmp`
/// (mode 0700 and a random name keep it private).
fn folder_base(runtime_dir: Option<PathBuf>, temp: PathBuf, name: &str) -> PathBuf {
    // SAFETY: sockaddr_un is plain data; only its field's length is read.
    let address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    let fits = |base: &PathBuf| {
        let path = base.join(name).into_os_string().len() + LONGEST_SOCKET_NAME.len();
        path < address.sun_path.len()
    };
    runtime_dir
        .into_iter()
        .chain([temp])
        .find(fits)
        .unwrap_or_else(|| PathBuf::from("/tmp"))
}

/// Removes our own user's `ci-ssh-<pid>-…` folders whose process no longer runs.
fn sweep_abandoned(base: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("ci-ssh-"))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let ours = entry
            .path()
            .symlink_metadata()
            .is_ok_and(|m| m.is_dir() && m.uid() == me);
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = pid > 0
            && unsafe { libc::kill(pid, 0) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if ours && gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Aborting this task drops the set, which aborts every connection and so kills its child.
async fn accept_loop(
    listener: UnixListener,
    argv: Vec<String>,
    masters: Arc<Masters>,
    stderr: Arc<Mutex<String>>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let seat = masters.take_seat();
                    let mut full = seat.options();
                    full.extend(argv.iter().cloned());
                    let stderr = stderr.clone();
                    connections.spawn(async move {
                        bridge(stream, full, stderr).await;
                        drop(seat);
                    });
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// The shared ssh connections of one tunnel: how many connections each carries now.
struct Masters {
    folder: PathBuf,
    seats: Mutex<Vec<usize>>,
}

/// One connection's place on a master, given back when the connection ends.
struct Seat {
    masters: Arc<Masters>,
    index: usize,
}

impl Masters {
    fn new(folder: PathBuf) -> Masters {
        Masters {
            folder,
            seats: Mutex::new(Vec::new()),
        }
    }

    fn path(&self, index: usize) -> PathBuf {
        self.folder.join(format!("mux-{index}"))
    }

    fn paths(&self) -> Vec<PathBuf> {
        let count = self.seats.lock().unwrap_or_else(|e| e.into_inner()).len();
        (0..count).map(|i| self.path(i)).collect()
    }

    /// A seat on the first master with room, else on a new one.
    fn take_seat(self: &Arc<Self>) -> Seat {
        let mut seats = self.seats.lock().unwrap_or_else(|e| e.into_inner());
        let index = match seats.iter().position(|&n| n < SESSIONS_PER_MASTER) {
            Some(index) => index,
            None => {
                seats.push(0);
                seats.len() - 1
            }
        };
        seats[index] += 1;
        Seat {
            masters: self.clone(),
            index,
        }
    }
}

impl Seat {
    /// ssh's options for sharing this seat's master.
    fn options(&self) -> Vec<String> {
        vec![
            "-o".to_string(),
            "ControlMaster=auto".into(),
            "-o".into(),
            format!("ControlPath={}", self.masters.path(self.index).display()),
            "-o".into(),
            CONTROL_PERSIST.into(),
        ]
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut seats = self.masters.seats.lock().unwrap_or_else(|e| e.into_inner());
        seats[self.index] = seats[self.index].saturating_sub(1);
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
    let (Some(mut stdin), Some(mut stdout), Some(mut err_pipe)) =
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
    // Each direction ends on its own: the client's end of input closes ssh's stdin (dropping
    // it is what closes it), so ssh and `dial-stdio` end the connection, and ssh's end of
    // output is passed on as the end of the stream.
    let (mut from_client, mut to_client) = stream.split();
    let upstream = async move {
        let _ = tokio::io::copy(&mut from_client, &mut stdin).await;
        drop(stdin);
    };
    let downstream = async move {
        let _ = tokio::io::copy(&mut stdout, &mut to_client).await;
        let _ = to_client.shutdown().await;
    };
    tokio::join!(upstream, downstream);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_of_gone_processes_are_swept_and_live_ones_kept() {
        let base = std::env::temp_dir().join(format!("ci-sweep-{}", uuid::Uuid::new_v4()));
        let gone = base.join("ci-ssh-2147483646-abc");
        let live = base.join(format!("ci-ssh-{}-def", std::process::id()));
        let other = base.join("unrelated");
        for dir in [&gone, &live, &other] {
            std::fs::create_dir_all(dir).unwrap();
        }
        sweep_abandoned(&base);
        assert!(!gone.exists());
        assert!(live.exists() && other.exists());
        std::fs::remove_dir_all(base).unwrap();
    }
    #[test]
    fn the_folder_goes_where_its_sockets_fit_as_on_macos_whose_temp_folder_is_long() {
        let name = format!("ci-ssh-99999-{}", uuid::Uuid::new_v4().simple());
        let run = PathBuf::from("/run/user/1000");
        let tmp = PathBuf::from("/tmp");
        assert_eq!(folder_base(Some(run.clone()), tmp.clone(), &name), run);
        assert_eq!(folder_base(None, tmp.clone(), &name), tmp);
        // A Mac's per-user temp folder, with $XDG_RUNTIME_DIR unset.
        let mac_temp = PathBuf::from("/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/");
        let long = PathBuf::from(format!("/{}", "x".repeat(60)));
        assert_eq!(folder_base(None, mac_temp, &name), tmp);
        assert_eq!(folder_base(Some(long.clone()), long, &name), tmp);
        let fitted = tmp.join(&name).into_os_string().len() + LONGEST_SOCKET_NAME.len();
        assert!(fitted < 104, "{fitted}");
    }

    #[test]
    fn a_master_carries_at_most_eight_connections_and_seats_are_given_back() {
        let masters = Arc::new(Masters::new(PathBuf::from("/nonexistent")));
        let first: Vec<Seat> = (0..SESSIONS_PER_MASTER)
            .map(|_| masters.take_seat())
            .collect();
        assert!(first.iter().all(|s| s.index == 0));
        let ninth = masters.take_seat();
        assert_eq!(ninth.index, 1);
        assert_eq!(masters.paths().len(), 2);
        drop(first);
        assert_eq!(masters.take_seat().index, 0);
        assert!(ninth.options().iter().any(|o| o.ends_with("mux-1")));
    }
}
