//! Who owns a container: this process, identified so that a reused pid is not mistaken
//! for it (process start time and boot id on Linux).

use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerIdentity {
    pub pid: u32,
    /// Start time of the process in clock ticks since boot (Linux); empty where unknown.
    pub start: String,
    pub boot_id: String,
    pub host: String,
}

impl OwnerIdentity {
    pub fn current() -> &'static OwnerIdentity {
        static CURRENT: OnceLock<OwnerIdentity> = OnceLock::new();
        CURRENT.get_or_init(|| {
            let pid = std::process::id();
            OwnerIdentity {
                pid,
                start: process_start_ticks(pid).unwrap_or_default(),
                boot_id: read_trimmed("/proc/sys/kernel/random/boot_id").unwrap_or_default(),
                host: host_name(),
            }
        })
    }
}

/// Field 22 of `/proc/<pid>/stat`, counted after the command name (which may hold spaces).
pub fn process_start_ticks(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19).map(str::to_string)
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn host_name() -> String {
    read_trimmed("/proc/sys/kernel/hostname")
        .or_else(|| read_trimmed("/etc/hostname"))
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn current_process_has_a_start_time_and_boot_id() {
        let me = OwnerIdentity::current();
        assert_eq!(me.pid, std::process::id());
        assert!(me.start.parse::<u64>().is_ok(), "start {:?}", me.start);
        assert_eq!(me.boot_id.len(), 36);
        assert_eq!(
            process_start_ticks(me.pid).as_deref(),
            Some(me.start.as_str())
        );
    }
}
