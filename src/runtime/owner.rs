//! Who owns a container: this process, identified so that a reused pid is not mistaken
//! for it: its pid, its start time and the boot it runs in. Linux reads them from `/proc`;
//! macOS, which has no `/proc`, asks `sysctl` (`kern.proc.pid.<pid>`'s start time,
//! `kern.bootsessionuuid`) and `gethostname`.

use std::sync::OnceLock;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerIdentity {
    pub pid: u32,
    /// When the process started: clock ticks since boot on Linux, microseconds since the
    /// epoch on macOS; empty where unknown.
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
                start: process_start(pid).unwrap_or_default(),
                boot_id: boot_id().unwrap_or_default(),
                host: host_name(),
            }
        })
    }
}

/// Field 22 of `/proc/<pid>/stat`, counted after the command name (which may hold spaces).
#[cfg(target_os = "linux")]
pub fn process_start(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19).map(str::to_string)
}

/// The start time `sysctl` gives for `kern.proc.pid.<pid>` (any user's process, as `ps`
/// reads it); `None` for a pid no process has.
#[cfg(target_os = "macos")]
pub fn process_start(pid: u32) -> Option<String> {
    let mut mib = [
        libc::CTL_KERN,
        libc::KERN_PROC,
        libc::KERN_PROC_PID,
        libc::c_int::try_from(pid).ok()?,
    ];
    // A `struct kinfo_proc` (648 bytes) with room to spare, aligned for its fields.
    let mut info = [0u64; 128];
    let mut len = std::mem::size_of_val(&info);
    // SAFETY: `info` is writable for `len` bytes; the kernel writes at most that and says
    // how much it wrote.
    let rc = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            mib.len() as libc::c_uint,
            info.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return None;
    }
    // SAFETY: `info` is plain bytes, and `len` of them were written.
    let bytes = unsafe { std::slice::from_raw_parts(info.as_ptr().cast::<u8>(), len) };
    start_of_kinfo_proc(bytes)
}

/// The start time in a `struct kinfo_proc` as `sysctl` returned it: its first field,
/// `kp_proc.p_starttime`, a `struct timeval`, in microseconds since the epoch. `None` when
/// the answer is empty (no such process) or too short.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
fn start_of_kinfo_proc(bytes: &[u8]) -> Option<String> {
    if bytes.len() < std::mem::size_of::<libc::timeval>() {
        return None;
    }
    // SAFETY: at least a `timeval`'s bytes, read unaligned.
    let start: libc::timeval = unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) };
    #[allow(clippy::unnecessary_cast)]
    let micros = start.tv_sec as i64 * 1_000_000 + start.tv_usec as i64;
    (micros > 0).then(|| micros.to_string())
}

#[cfg(target_os = "linux")]
fn boot_id() -> Option<String> {
    read_trimmed("/proc/sys/kernel/random/boot_id")
}

/// `kern.bootsessionuuid`: a UUID made at each boot.
#[cfg(target_os = "macos")]
fn boot_id() -> Option<String> {
    let mut buf = [0u8; 64];
    let mut len = buf.len();
    // SAFETY: a NUL-terminated name; `buf` is writable for `len` bytes.
    let rc = unsafe {
        libc::sysctlbyname(
            c"kern.bootsessionuuid".as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0).then(|| c_text(&buf[..len.min(buf.len())]))?
}

/// Text a system call wrote, up to its NUL; `None` when empty.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
fn c_text(bytes: &[u8]) -> Option<String> {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let text = String::from_utf8_lossy(&bytes[..end]).trim().to_string();
    (!text.is_empty()).then_some(text)
}

#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(target_os = "linux")]
fn host_name() -> String {
    read_trimmed("/proc/sys/kernel/hostname")
        .or_else(|| read_trimmed("/etc/hostname"))
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
}

#[cfg(target_os = "macos")]
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its length.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    (rc == 0)
        .then(|| c_text(&buf))
        .flatten()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_process_has_a_start_time_and_boot_id() {
        let me = OwnerIdentity::current();
        assert_eq!(me.pid, std::process::id());
        assert!(me.start.parse::<u64>().is_ok(), "start {:?}", me.start);
        assert_eq!(me.boot_id.len(), 36);
        assert!(!me.host.is_empty());
        assert_eq!(process_start(me.pid).as_deref(), Some(me.start.as_str()));
    }

    #[test]
    fn macos_answers_are_read_as_the_kernel_lays_them_out() {
        let mut kinfo_proc = vec![0u8; 648];
        let start = libc::timeval {
            tv_sec: 1_764_000_000,
            tv_usec: 123_456,
        };
        // SAFETY: the buffer holds a timeval at its start.
        unsafe { std::ptr::write_unaligned(kinfo_proc.as_mut_ptr().cast(), start) };
        assert_eq!(
            start_of_kinfo_proc(&kinfo_proc).as_deref(),
            Some("1764000000123456")
        );
        assert_eq!(start_of_kinfo_proc(&[]), None);
        assert_eq!(start_of_kinfo_proc(&[0u8; 648]), None);
        assert_eq!(
            c_text(b"D5D3A6F2-1C4B-4F0E-9B1A-3C2D7E8F9A0B\0\0\0").as_deref(),
            Some("D5D3A6F2-1C4B-4F0E-9B1A-3C2D7E8F9A0B")
        );
        assert_eq!(c_text(b"\0host"), None);
    }
}
