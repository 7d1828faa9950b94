//! Finding the session agent's executable for an engine's architecture: the path in
//! `CONTAINER_ISOLATION_AGENT` (or `off` to disable the agent), else the file shipped beside
//! the loaded addon (`container-isolation-agent.linux-<arch>`). For bind mounts it is
//! copied once into a private directory of ours, so that a mount source never lies in a
//! tree a container may write (npm's `node_modules` inside a mounted project would be).

use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use sha2::{Digest, Sha256};

/// The variable that names the agent binary, or disables the agent with `off`.
pub const AGENT_ENV: &str = "CONTAINER_ISOLATION_AGENT";

/// The agent as loaded from disk: its bytes (a static executable of about 1.5 MB) and
/// their hash, which names its private copy and its upload in containers.
#[derive(Debug)]
pub struct AgentBinary {
    pub arch: &'static str,
    pub bytes: Vec<u8>,
    pub digest: String,
    /// Private copies made so far, by base directory.
    private_copies: std::sync::Mutex<Vec<(PathBuf, PathBuf)>>,
}

/// The architecture names engines report (`docker version`'s `Arch`), in ours.
pub fn npm_arch(engine_arch: &str) -> Option<&'static str> {
    match engine_arch {
        "amd64" | "x86_64" => Some("x64"),
        "arm64" | "aarch64" => Some("arm64"),
        _ => None,
    }
}

/// Whether the agent is switched off for this process.
pub fn disabled() -> bool {
    std::env::var(AGENT_ENV).is_ok_and(|v| v == "off" || v == "0")
}

/// The agent for an engine of `engine_arch`, loaded once per process; `None` when it is
/// disabled, not shipped for that architecture, or not readable.
pub fn agent_binary(engine_arch: &str) -> Option<Arc<AgentBinary>> {
    static LOADED: OnceLock<std::sync::Mutex<Vec<Arc<AgentBinary>>>> = OnceLock::new();
    if disabled() {
        return None;
    }
    let arch = npm_arch(engine_arch)?;
    let loaded = LOADED.get_or_init(Default::default);
    let mut loaded = loaded.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = loaded.iter().find(|b| b.arch == arch) {
        return Some(found.clone());
    }
    let path = locate(arch)?;
    let bytes = std::fs::read(&path)
        .ok()
        .filter(|b| b.starts_with(b"\x7fELF"))?;
    let digest = hex::encode(Sha256::digest(&bytes));
    let binary = Arc::new(AgentBinary {
        arch,
        bytes,
        digest,
        private_copies: Default::default(),
    });
    loaded.push(binary.clone());
    Some(binary)
}

fn locate(arch: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(AGENT_ENV).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        // A named binary serves the machine's own architecture only.
        return (arch == npm_arch(std::env::consts::ARCH)?).then_some(path);
    }
    let name = file_name(arch);
    let dir = addon_dir()?;
    [dir.join(&name), dir.join("..").join(&name)]
        .into_iter()
        .find(|p| p.is_file())
}

pub fn file_name(arch: &str) -> String {
    format!("container-isolation-agent.linux-{arch}")
}

/// The directory of the shared object (or executable) this code was loaded from.
fn addon_dir() -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let here = addon_dir as *const libc::c_void;
    // SAFETY: dladdr only reads the loader's tables; info is a valid out-pointer.
    if unsafe { libc::dladdr(here, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the loader.
    let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(std::ffi::OsStr::new(
        std::str::from_utf8(name.to_bytes()).ok()?,
    ));
    let path = if path.is_absolute() {
        path
    } else {
        std::env::current_exe().ok()?
    };
    path.parent().map(Path::to_path_buf)
}

impl AgentBinary {
    /// A short form of the digest for file names.
    pub fn tag(&self) -> &str {
        &self.digest[..16]
    }

    /// The read-only copy under `base`/agent/<digest>/ that containers bind-mount: created
    /// once, by this user, in directories only this user may write. `None` when that cannot
    /// be made (the agent is then uploaded into containers instead).
    pub fn private_copy(&self, base: &Path) -> Option<PathBuf> {
        let mut copies = self
            .private_copies
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // A base directory removed since (a test's, a reset) gets a new copy.
        copies.retain(|(_, file)| file.is_file());
        if let Some((_, file)) = copies.iter().find(|(b, _)| b == base) {
            return Some(file.clone());
        }
        let file = self.make_private_copy(base)?;
        copies.push((base.to_path_buf(), file.clone()));
        Some(file)
    }

    fn make_private_copy(&self, base: &Path) -> Option<PathBuf> {
        let dir = base.join("agent").join(self.tag());
        let file = dir.join("container-isolation-agent");
        std::fs::create_dir_all(&dir).ok()?;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        for step in [base.to_path_buf(), base.join("agent"), dir.clone()] {
            let meta = std::fs::symlink_metadata(&step).ok()?;
            if !meta.is_dir() || meta.uid() != me || meta.mode() & 0o022 != 0 {
                tracing::warn!("agent: {} is not a private directory", step.display());
                return None;
            }
        }
        if let Ok(meta) = std::fs::symlink_metadata(&file) {
            let same = meta.is_file()
                && meta.uid() == me
                && std::fs::read(&file).is_ok_and(|b| b == self.bytes);
            if same {
                return Some(file);
            }
            std::fs::remove_file(&file).ok()?;
        }
        let temp = dir.join(format!(".tmp-{}", uuid::Uuid::new_v4().simple()));
        let written = (|| {
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)?;
            out.write_all(&self.bytes)?;
            out.set_permissions(std::fs::Permissions::from_mode(0o555))?;
            out.sync_all()?;
            std::fs::rename(&temp, &file)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
            return None;
        }
        Some(file)
    }
}
