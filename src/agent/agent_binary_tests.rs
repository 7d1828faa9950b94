//! Choosing the agent by the container's architecture, from directories and files holding
//! stand-ins: 64-byte ELF headers of the machine type named, as the release's agents have.

use std::path::{Path, PathBuf};

use super::*;

const X86_64: u16 = 62;
const AARCH64: u16 = 183;

/// A directory of its own, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("ci-agent-arch-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir(&dir).unwrap();
        Dir(dir)
    }

    /// Writes a stand-in agent for `machine` as `name`; returns its bytes.
    fn standin(&self, name: &str, machine: u16) -> Vec<u8> {
        let bytes = elf_header(machine);
        std::fs::write(self.0.join(name), &bytes).unwrap();
        bytes
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An ELF64 little-endian header of a static-pie executable (`ET_DYN`) for `machine`.
fn elf_header(machine: u16) -> Vec<u8> {
    let mut header = vec![0u8; 64];
    header[..4].copy_from_slice(b"\x7fELF");
    header[4] = 2; // ELFCLASS64
    header[5] = 1; // ELFDATA2LSB
    header[6] = 1; // EV_CURRENT
    header[16..18].copy_from_slice(&3u16.to_le_bytes());
    header[18..20].copy_from_slice(&machine.to_le_bytes());
    header[20..24].copy_from_slice(&1u32.to_le_bytes());
    header
}

const X64_NAME: &str = "container-isolation-agent.linux-x64";
const ARM64_NAME: &str = "container-isolation-agent.linux-arm64";

/// The agent `dir` gives a container whose architecture the engine or image calls `arch`.
fn chosen(dir: &Path, arch: &str) -> Result<Arc<AgentBinary>, String> {
    let found = agent_binary_from(
        &AgentSource::Dir(dir.to_path_buf()),
        AgentArch::for_container(arch)?,
    );
    eprintln!("{arch}: {:?}", found.as_ref().map(|b| b.arch));
    found
}

#[test]
fn arm64_and_aarch64_containers_get_the_arm64_agent_and_amd64_ones_the_x64_agent() {
    let dir = Dir::new();
    let x64 = dir.standin(X64_NAME, X86_64);
    let arm64 = dir.standin(ARM64_NAME, AARCH64);
    for arch in ["arm64", "aarch64"] {
        let binary = chosen(&dir.0, arch).unwrap();
        assert_eq!(binary.arch, AgentArch::Arm64);
        assert_eq!(binary.bytes, arm64);
    }
    for arch in ["amd64", "x86_64"] {
        let binary = chosen(&dir.0, arch).unwrap();
        assert_eq!(binary.arch, AgentArch::X64);
        assert_eq!(binary.bytes, x64);
    }
}

#[test]
fn an_absent_arm64_agent_means_the_engine_path_saying_so() {
    let dir = Dir::new();
    dir.standin(X64_NAME, X86_64);
    let why = chosen(&dir.0, "aarch64").unwrap_err();
    eprintln!("{why}");
    let expected = format!(
        "no session agent for linux/arm64 in {} (container-isolation-agent.linux-arm64 absent)",
        dir.0.display()
    );
    assert_eq!(why, expected);
    assert!(chosen(&dir.0, "amd64").is_ok());
}

#[test]
fn an_x86_64_executable_under_the_arm64_name_is_refused() {
    let dir = Dir::new();
    dir.standin(X64_NAME, X86_64);
    dir.standin(ARM64_NAME, X86_64);
    let why = chosen(&dir.0, "arm64").unwrap_err();
    eprintln!("{why}");
    let expected = format!(
        "no session agent for linux/arm64 in {} (container-isolation-agent.linux-arm64 is an x86-64 executable, not aarch64)",
        dir.0.display()
    );
    assert_eq!(why, expected);
}

#[test]
fn what_is_not_a_64_bit_little_endian_elf_is_refused() {
    let dir = Dir::new();
    std::fs::write(dir.0.join(X64_NAME), b"#!/bin/sh\nexit 0\n").unwrap();
    let why = chosen(&dir.0, "amd64").unwrap_err();
    assert!(
        why.ends_with(
            "(container-isolation-agent.linux-x64 is not an ELF executable, not one for x86-64)"
        ),
        "{why}"
    );
    let mut big_endian = elf_header(X86_64);
    big_endian[5] = 2;
    std::fs::write(dir.0.join(ARM64_NAME), big_endian).unwrap();
    let why = chosen(&dir.0, "arm64").unwrap_err();
    assert!(
        why.contains("is not a 64-bit little-endian ELF executable"),
        "{why}"
    );
}

#[test]
fn other_architectures_have_no_agent() {
    let dir = Dir::new();
    dir.standin(X64_NAME, X86_64);
    for (arch, why) in [
        ("ppc64le", "no session agent for linux/ppc64le: agents are built for linux/amd64 and linux/arm64 only"),
        ("arm", "no session agent for linux/arm: agents are built for linux/amd64 and linux/arm64 only"),
        ("", "no session agent: the container's architecture is unknown"),
    ] {
        assert_eq!(chosen(&dir.0, arch).unwrap_err(), why);
    }
}

#[test]
fn a_named_file_serves_only_its_own_machine_type() {
    let dir = Dir::new();
    let arm64 = dir.standin("my-agent", AARCH64);
    let file = AgentSource::File(dir.0.join("my-agent"));
    let binary = agent_binary_from(&file, AgentArch::Arm64).unwrap();
    assert_eq!(binary.bytes, arm64);
    let why = agent_binary_from(&file, AgentArch::X64).unwrap_err();
    eprintln!("{why}");
    let expected = format!(
        "no session agent for linux/amd64: CONTAINER_ISOLATION_AGENT={} is an aarch64 executable, not x86-64",
        dir.0.join("my-agent").display()
    );
    assert_eq!(why, expected);
    let missing = AgentSource::File(dir.0.join("nothing"));
    let why = agent_binary_from(&missing, AgentArch::X64).unwrap_err();
    assert!(why.ends_with("/nothing does not exist"), "{why}");
}
