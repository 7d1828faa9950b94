//! Signalling everything a command started inside a container. The Engine API cannot kill
//! an exec (moby #9098), so every exec we start carries a unique token in its environment,
//! which its whole tree inherits — also children that left its process group. We signal
//! that tree from the host when the engine is local and we may (`kill` on host pids found
//! by cgroup and token), else from inside the container with a second exec.

use std::time::Duration;

use super::exec_token::token_entry;
use crate::engine::Engine;
use crate::error::Result;

/// How long a signal sent in the background may take (an engine that does not answer).
const BACKGROUND_BOUND: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Term,
    Kill,
}

impl Signal {
    pub fn name(self) -> &'static str {
        match self {
            Signal::Term => "TERM",
            Signal::Kill => "KILL",
        }
    }

    /// The name Node uses (`NodeJS.Signals`).
    pub fn node_name(self) -> &'static str {
        match self {
            Signal::Term => "SIGTERM",
            Signal::Kill => "SIGKILL",
        }
    }

    #[cfg(unix)]
    pub fn number(self) -> i32 {
        match self {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        }
    }
}

/// Kills by token from inside the container. `$1` is the signal, `$2` the `VAR=token`
/// entry; nothing is interpolated into the script. A KILL pass is repeated while it still
/// finds the token (at most `KILL_PASSES` times): a process the tree forked after the scan
/// began (`setsid`'s own fork, a fork loop) is caught by the next one.
const IN_CONTAINER_SCRIPT: &str = r#"self=$$
pass=1
while :; do
  found=
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$self" ] && continue
    if tr '\000' '\n' < "$d/environ" 2>/dev/null | grep -qxF "$2"; then
      kill -s "$1" "$p" 2>/dev/null && found=1
    fi
  done
  [ "$1" = KILL ] && [ -n "$found" ] && [ "$pass" -lt 5 ] || break
  pass=$((pass + 1))
done
exit 0"#;

/// Scans a KILL makes at most, inside the container (`IN_CONTAINER_SCRIPT`'s 5) and from the
/// host: each finds what the tree forked while the one before ran.
#[cfg(target_os = "linux")]
const KILL_PASSES: usize = 5;

/// Exits 0 when a process other than itself carries the token entry "$1" in its
/// environment, 1 when none does: `tree_alive` where the host cannot see the container.
const IN_CONTAINER_ALIVE_SCRIPT: &str = r#"self=$$
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = "$self" ] && continue
  if tr '\000' '\n' < "$d/environ" 2>/dev/null | grep -qxF "$1"; then
    exit 0
  fi
done
exit 1"#;

/// One exec's tree, owned: what a signal needs once the exec's caller has moved on.
#[derive(Clone)]
pub struct ExecTree {
    pub engine: Engine,
    pub container: String,
    pub exec_id: String,
    pub token: String,
}

impl ExecTree {
    pub async fn signal(&self, signal: Signal) -> Result<()> {
        signal_exec_tree(
            &self.engine,
            &self.container,
            &self.exec_id,
            &self.token,
            signal,
        )
        .await
    }

    /// Sends `signal` on a task of its own, bounded by `BACKGROUND_BOUND`; the handle gives
    /// the result, or `None` when the engine did not finish in time.
    pub fn signal_in_background(
        self,
        signal: Signal,
    ) -> tokio::task::JoinHandle<Option<Result<()>>> {
        tokio::spawn(async move {
            let sent = tokio::time::timeout(BACKGROUND_BOUND, self.signal(signal)).await;
            if sent.is_err() {
                tracing::warn!(
                    "signalling exec {} in '{}' did not finish",
                    self.exec_id,
                    self.container
                );
            }
            sent.ok()
        })
    }
}

/// Sends `signal` to every process of the exec marked with `token` in `container`.
/// `exec_id` gives the exec's own host pid, whose process group is signalled too.
pub async fn signal_exec_tree(
    engine: &Engine,
    container: &str,
    exec_id: &str,
    token: &str,
    signal: Signal,
) -> Result<()> {
    if engine.is_local() {
        if let Some(done) = signal_from_host(engine, container, exec_id, token, signal).await {
            if done {
                return Ok(());
            }
        }
    }
    signal_from_container(engine, container, token, signal).await
}

/// `Some(true)` when every matching process was signalled from the host, `Some(false)` when
/// permission was lacking for some, `None` when the host cannot see the container.
#[cfg(target_os = "linux")]
async fn signal_from_host(
    engine: &Engine,
    container: &str,
    exec_id: &str,
    token: &str,
    signal: Signal,
) -> Option<bool> {
    let docker = engine.docker();
    let exec_pid = docker.inspect_exec(exec_id).await.ok()?.pid.unwrap_or(0);
    let container_id = engine
        .inspect_container(container, container)
        .await
        .ok()?
        .id?;
    let entry = token_entry(token);
    let signal_number = signal.number();
    let passes = if signal == Signal::Kill {
        KILL_PASSES
    } else {
        1
    };
    tokio::task::spawn_blocking(move || {
        let mut pids = host::pids_in_container_with_entry(&container_id, entry.as_bytes());
        if pids.is_empty() && exec_pid <= 0 {
            return None;
        }
        let mut all_permitted = true;
        if exec_pid > 0 && host::belongs_to(exec_pid as u32, &container_id) {
            all_permitted &= host::kill(-(exec_pid as i32), signal_number);
        }
        for pass in 1..=passes {
            for pid in &pids {
                all_permitted &= host::kill(*pid as i32, signal_number);
            }
            if pass == passes || pids.is_empty() {
                break;
            }
            pids = host::pids_in_container_with_entry(&container_id, entry.as_bytes());
        }
        Some(all_permitted)
    })
    .await
    .ok()
    .flatten()
}

/// Off on macOS: there is no `/proc` to find the tree in, and Docker Desktop's processes run
/// in its VM, out of the Mac's reach; the signal goes from inside the container.
#[cfg(not(target_os = "linux"))]
async fn signal_from_host(
    _engine: &Engine,
    _container: &str,
    _exec_id: &str,
    _token: &str,
    _signal: Signal,
) -> Option<bool> {
    None
}

/// Signals the token's processes by an exec inside the container (needs `/bin/sh`, `tr`,
/// `grep` and `kill` there); the path for remote engines and for hosts without permission.
pub async fn signal_from_container(
    engine: &Engine,
    container: &str,
    token: &str,
    signal: Signal,
) -> Result<()> {
    let command = in_container_signal_command(token, signal);
    super::exec::run_plain(engine, container, command, Some("0")).await?;
    Ok(())
}

/// The argv, run as root inside the container, that sends `signal` to the token's processes.
pub fn in_container_signal_command(token: &str, signal: Signal) -> Vec<String> {
    vec![
        "/bin/sh".to_string(),
        "-c".to_string(),
        IN_CONTAINER_SCRIPT.to_string(),
        "sh".to_string(),
        signal.name().to_string(),
        token_entry(token),
    ]
}

/// Whether any process of the token's tree still runs: from the host's `/proc` when the
/// engine is local, else by an exec inside the container (a remote engine); `None` when
/// neither can tell (no `/bin/sh` in the container).
pub async fn tree_alive(engine: &Engine, container: &str, token: &str) -> Option<bool> {
    // Linux only, like `signal_from_host`: macOS asks inside the container.
    #[cfg(target_os = "linux")]
    if engine.is_local() {
        let container_id = engine
            .inspect_container(container, container)
            .await
            .ok()?
            .id?;
        let entry = token_entry(token);
        return tokio::task::spawn_blocking(move || {
            !host::pids_in_container_with_entry(&container_id, entry.as_bytes()).is_empty()
        })
        .await
        .ok();
    }
    let command = vec![
        "/bin/sh".to_string(),
        "-c".to_string(),
        IN_CONTAINER_ALIVE_SCRIPT.to_string(),
        "sh".to_string(),
        token_entry(token),
    ];
    match super::exec::run_plain(engine, container, command, Some("0")).await {
        Ok(0) => Some(true),
        Ok(1) => Some(false),
        _ => None,
    }
}

#[cfg(target_os = "linux")]
mod host {
    use std::fs;

    /// Whether a host process runs in the container (its cgroup path names the container).
    pub fn belongs_to(pid: u32, container_id: &str) -> bool {
        fs::read_to_string(format!("/proc/{pid}/cgroup"))
            .map(|cgroup| cgroup.contains(container_id))
            .unwrap_or(false)
    }

    pub fn pids_in_container_with_entry(container_id: &str, entry: &[u8]) -> Vec<u32> {
        let Ok(dir) = fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| belongs_to(pid, container_id))
            .filter(|&pid| {
                fs::read(format!("/proc/{pid}/environ"))
                    .map(|env| env.split(|&b| b == 0).any(|var| var == entry))
                    .unwrap_or(false)
            })
            .collect()
    }

    /// `false` only when we lack permission; a process already gone counts as done.
    pub fn kill(pid: i32, signal: i32) -> bool {
        // SAFETY: kill(2) takes plain integers and has no memory effects.
        let rc = unsafe { libc::kill(pid, signal) };
        rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EPERM)
    }
}
