//! Which file is the session agent for a container's architecture:
//! `container-isolation-agent.linux-<x64|arm64>` in a directory (the loaded addon's, or the one
//! `CONTAINER_ISOLATION_AGENT` names), or the single file that variable names. A file counts
//! only when its ELF header says it runs on that machine; every refusal says why, in words
//! `containerAccess().reason` can show.

use std::path::{Path, PathBuf};

/// The variable that names the agent (a directory holding agents, or one agent binary), or
/// disables the agent with `off`.
pub const AGENT_ENV: &str = "CONTAINER_ISOLATION_AGENT";

/// An architecture the agent is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentArch {
    X64,
    Arm64,
}

impl AgentArch {
    /// From an engine's, image's or platform's name for it (`amd64`, `arm64`, `aarch64`...).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "amd64" | "x86_64" | "x64" => Some(AgentArch::X64),
            "arm64" | "aarch64" => Some(AgentArch::Arm64),
            _ => None,
        }
    }

    /// The agent architecture for a container of `name`'s architecture, or why none serves it.
    pub fn for_container(name: &str) -> Result<Self, String> {
        AgentArch::from_name(name).ok_or_else(|| match name {
            "" => "no session agent: the container's architecture is unknown".into(),
            _ => format!(
                "no session agent for linux/{name}: agents are built for linux/amd64 and linux/arm64 only"
            ),
        })
    }

    /// Its name in npm's platform names and in our file names.
    pub fn npm(self) -> &'static str {
        match self {
            AgentArch::X64 => "x64",
            AgentArch::Arm64 => "arm64",
        }
    }

    /// The OCI platform of containers it serves.
    pub fn platform(self) -> &'static str {
        match self {
            AgentArch::X64 => "linux/amd64",
            AgentArch::Arm64 => "linux/arm64",
        }
    }

    /// The ELF `e_machine` of its executables.
    fn elf_machine(self) -> u16 {
        match self {
            AgentArch::X64 => EM_X86_64,
            AgentArch::Arm64 => EM_AARCH64,
        }
    }

    /// The agent's file name, beside the addon and in the npm packages.
    pub fn file_name(self) -> String {
        format!("container-isolation-agent.linux-{}", self.npm())
    }
}

const EM_X86_64: u16 = 62;
const EM_AARCH64: u16 = 183;

/// Where agents are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentSource {
    /// A directory holding `container-isolation-agent.linux-<arch>` files.
    Dir(PathBuf),
    /// One agent binary, named by `CONTAINER_ISOLATION_AGENT`; it serves its own machine type.
    File(PathBuf),
}

/// Where this process looks for agents: what `CONTAINER_ISOLATION_AGENT` names (a directory,
/// or else one file), else the directory of the loaded addon.
pub fn agent_source() -> Result<AgentSource, String> {
    if let Some(named) = std::env::var_os(AGENT_ENV).filter(|v| !v.is_empty()) {
        let named = PathBuf::from(named);
        return Ok(match named.is_dir() {
            true => AgentSource::Dir(named),
            false => AgentSource::File(named),
        });
    }
    addon_dir()
        .map(AgentSource::Dir)
        .ok_or_else(|| "the loaded addon's directory, where the agents lie, is unknown".into())
}

impl AgentSource {
    /// The file that would be the agent for `arch`.
    pub fn path_for(&self, arch: AgentArch) -> PathBuf {
        match self {
            AgentSource::Dir(dir) => dir.join(arch.file_name()),
            AgentSource::File(file) => file.clone(),
        }
    }

    /// The agent for `arch` from here: its bytes, or why there is none.
    pub fn read(&self, arch: AgentArch) -> Result<Vec<u8>, String> {
        let path = self.path_for(arch);
        let problem = match std::fs::read(&path) {
            Ok(bytes) => match elf_mismatch(&bytes, arch) {
                None => return Ok(bytes),
                Some(why) => why,
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match self {
                AgentSource::Dir(_) => "absent".into(),
                AgentSource::File(_) => "does not exist".into(),
            },
            Err(e) => format!("is unreadable: {e}"),
        };
        Err(match self {
            AgentSource::Dir(dir) => format!(
                "no session agent for {} in {} ({} {problem})",
                arch.platform(),
                dir.display(),
                arch.file_name()
            ),
            AgentSource::File(file) => format!(
                "no session agent for {}: {AGENT_ENV}={} {problem}",
                arch.platform(),
                file.display()
            ),
        })
    }
}

/// Why `bytes` are not a 64-bit little-endian ELF executable for `arch`, if they are not.
pub fn elf_mismatch(bytes: &[u8], arch: AgentArch) -> Option<String> {
    let want = machine_name(arch.elf_machine());
    if bytes.len() < 20 || !bytes.starts_with(b"\x7fELF") {
        return Some(format!("is not an ELF executable, not one for {want}"));
    }
    // e_ident[EI_CLASS] = ELFCLASS64, e_ident[EI_DATA] = ELFDATA2LSB.
    if bytes[4] != 2 || bytes[5] != 1 {
        return Some(format!(
            "is not a 64-bit little-endian ELF executable, not one for {want}"
        ));
    }
    let machine = u16::from_le_bytes([bytes[18], bytes[19]]);
    (machine != arch.elf_machine())
        .then(|| format!("is an {} executable, not {want}", machine_name(machine)))
}

fn machine_name(machine: u16) -> String {
    match machine {
        EM_X86_64 => "x86-64".into(),
        EM_AARCH64 => "aarch64".into(),
        3 => "i386".into(),
        40 => "arm".into(),
        other => format!("ELF machine {other}"),
    }
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
