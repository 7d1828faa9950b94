//! The session agent as loaded from disk, once per process for each architecture and place
//! (`agent_lookup` says which file that is). For bind mounts it is copied once into a private
//! directory of ours, so that a mount source never lies in a tree a container may write (npm's
//! `node_modules` inside a mounted project would be).

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use sha2::{Digest, Sha256};

use super::agent_lookup::{agent_source, AgentArch, AgentSource, AGENT_ENV};

/// The agent as loaded from disk: its bytes (a static executable of about 1.5 MB) and
/// their hash, which names its private copy and its upload in containers.
#[derive(Debug)]
pub struct AgentBinary {
    pub arch: AgentArch,
    pub bytes: Vec<u8>,
    pub digest: String,
    /// Private copies made so far, by base directory.
    private_copies: Mutex<Vec<(PathBuf, PathBuf)>>,
}

/// Whether the agent is switched off for this process.
pub fn disabled() -> bool {
    std::env::var(AGENT_ENV).is_ok_and(|v| v == "off" || v == "0")
}

/// Why no agent runs anywhere while it is switched off.
pub const SWITCHED_OFF: &str = "the agent is switched off (CONTAINER_ISOLATION_AGENT=off)";

/// The agent for containers of `arch` (as engines and images name it: `amd64`, `arm64`,
/// `aarch64`...), or why there is none: switched off, no agent is built for that architecture,
/// or its file is absent or not an executable for it.
pub fn agent_binary(arch: &str) -> Result<Arc<AgentBinary>, String> {
    if disabled() {
        return Err(SWITCHED_OFF.into());
    }
    let arch = AgentArch::for_container(arch)?;
    agent_binary_from(&agent_source()?, arch)
}

/// The agent for `arch` from `source`, read once per process for each architecture and file.
pub fn agent_binary_from(
    source: &AgentSource,
    arch: AgentArch,
) -> Result<Arc<AgentBinary>, String> {
    type Loaded = Mutex<HashMap<(AgentArch, PathBuf), Arc<AgentBinary>>>;
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    let key = (arch, source.path_for(arch));
    let mut loaded = LOADED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(found) = loaded.get(&key) {
        return Ok(found.clone());
    }
    let bytes = source.read(arch)?;
    let digest = hex::encode(Sha256::digest(&bytes));
    let binary = Arc::new(AgentBinary {
        arch,
        bytes,
        digest,
        private_copies: Default::default(),
    });
    loaded.insert(key, binary.clone());
    Ok(binary)
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

#[cfg(test)]
#[path = "agent_binary_tests.rs"]
mod tests;
