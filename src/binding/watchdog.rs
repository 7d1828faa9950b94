//! Starting the watchdog process (once per engine per process), and its entry point: a
//! detached `node` that loads this addon and calls `runWatchdog`.

use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use napi_derive::napi;
use serde::{Deserialize, Serialize};

use crate::engine::{EngineKind, EngineOptions, SshOptions, TlsOptions};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::OwnerIdentity;

#[derive(Serialize, Deserialize)]
struct WatchdogConfig {
    pid: u32,
    start: String,
    boot_id: String,
    host: String,
    socket_path: Option<String>,
    engine_host: Option<String>,
    #[serde(default)]
    tls: Option<TlsOptions>,
    #[serde(default)]
    context: Option<String>,
    #[serde(default)]
    ssh: SshOptions,
    kind: Option<String>,
    timeout_ms: u64,
}

const SCRIPT: &str = "require(process.argv[1]).runWatchdog(process.argv[2])";

/// Spawns the watchdog for this engine unless one already watches this process for it.
pub fn ensure_started(engine: &EngineOptions) -> Result<()> {
    static STARTED: OnceLock<Mutex<HashSet<EngineOptions>>> = OnceLock::new();
    let mut started = STARTED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if started.contains(engine) {
        return Ok(());
    }
    let owner = OwnerIdentity::current();
    let config = WatchdogConfig {
        pid: owner.pid,
        start: owner.start.clone(),
        boot_id: owner.boot_id.clone(),
        host: owner.host.clone(),
        socket_path: engine.socket_path.clone(),
        engine_host: engine.host.clone(),
        tls: engine.tls.clone(),
        context: engine.context.clone(),
        ssh: engine.ssh.clone(),
        kind: engine.kind.map(|k| k.as_str().to_string()),
        timeout_ms: engine.timeout.as_millis() as u64,
    };
    let failed = |what: &str, err: &dyn std::fmt::Display| {
        Error::new(
            ErrorCode::EngineError,
            format!("cannot start the watchdog: {what}: {err}"),
        )
    };
    let node = std::env::current_exe().map_err(|e| failed("node executable", &e))?;
    let addon = addon_path().ok_or_else(|| failed("addon path", &"not found"))?;
    let json = serde_json::to_string(&config).map_err(|e| failed("config", &e))?;
    let mut command = Command::new(node);
    command
        .arg("-e")
        .arg(SCRIPT)
        .arg(addon)
        .arg(json)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    detach(&mut command);
    let mut child = command.spawn().map_err(|e| failed("spawn", &e))?;
    // Reap it should it end before us, without holding the event loop.
    std::thread::spawn(move || child.wait());
    started.insert(engine.clone());
    Ok(())
}

/// In its own session, so that signals sent to the owner's process group spare it.
#[cfg(unix)]
fn detach(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
}

#[cfg(not(unix))]
fn detach(_command: &mut Command) {}

/// The file this addon was loaded from.
#[cfg(unix)]
fn addon_path() -> Option<std::path::PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address of a function of this library.
    let found = unsafe { libc::dladdr(ensure_started as *const libc::c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the dynamic loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    Some(std::path::PathBuf::from(
        name.to_string_lossy().into_owned(),
    ))
}

#[cfg(not(unix))]
fn addon_path() -> Option<std::path::PathBuf> {
    None
}

/// Internal: the watchdog process's entry point. Blocks until the owner described by
/// `config` is gone, removes its `process` containers, and returns.
#[napi]
pub fn run_watchdog(config: String) {
    let Ok(config) = serde_json::from_str::<WatchdogConfig>(&config) else {
        return;
    };
    let owner = OwnerIdentity {
        pid: config.pid,
        start: config.start,
        boot_id: config.boot_id,
        host: config.host,
    };
    let engine = EngineOptions {
        socket_path: config.socket_path,
        host: config.engine_host,
        tls: config.tls,
        context: config.context,
        ssh: config.ssh,
        kind: match config.kind.as_deref() {
            Some("docker") => Some(EngineKind::Docker),
            Some("podman") => Some(EngineKind::Podman),
            _ => None,
        },
        timeout: Duration::from_millis(config.timeout_ms.max(1)),
    };
    crate::reaper::watch_owner(owner, vec![engine]);
}
