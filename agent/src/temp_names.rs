//! Names for temporary files that record which process made them (its pid namespace, pid
//! and start time), and the sweep that removes those whose process is gone. A write that
//! needs a named temporary file (no `O_TMPFILE`, or between `linkat` and `rename`) and is
//! cut short by its process's death leaves one behind; the next write in that directory
//! removes it, and never a file whose writer still runs. Names made in another pid
//! namespace (the host's, a container's) are left to a sweeper of that namespace.
//!
//! Linux only: macOS has no pid namespaces and no `/proc`, and nothing there writes these
//! files (the agent runs in Linux containers, and the host path that writes into a
//! container's files from the host is Linux's alone, `ContainerRoot`). Built for macOS,
//! names say namespace 0, which no sweeper claims, and a sweep removes nothing.

use std::ffi::{CStr, CString};
use std::os::fd::RawFd;

const PREFIX: &str = ".container-isolation-tmp-";

/// A process, as its temporary files name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Owner {
    ns: u64,
    pid: u32,
    start: u64,
}

/// The inode of a pid namespace link (`pid:[4026531836]`).
#[cfg(target_os = "linux")]
fn pid_namespace(pid: &str) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok()?;
    let text = link.to_str()?;
    text.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
}

/// A process's start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`).
fn start_time(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(target_os = "linux")]
fn this_process() -> Option<Owner> {
    Some(Owner {
        ns: pid_namespace("self")?,
        pid: std::process::id(),
        start: start_time("self")?,
    })
}

/// Off on macOS (see the module's comment): no identity, so no sweep.
#[cfg(not(target_os = "linux"))]
fn this_process() -> Option<Owner> {
    None
}

#[cfg(target_os = "linux")]
fn random() -> u64 {
    let mut bits = 0u64;
    // SAFETY: fills a u64 from the kernel's random source.
    unsafe { libc::getrandom((&mut bits as *mut u64).cast(), 8, 0) };
    bits
}

/// macOS has no `getrandom`; `getentropy` reads the same kind of source (at most 256 bytes).
#[cfg(not(target_os = "linux"))]
fn random() -> u64 {
    let mut bits = 0u64;
    // SAFETY: fills a u64 from the kernel's random source.
    unsafe { libc::getentropy((&mut bits as *mut u64).cast(), 8) };
    bits
}

/// A fresh temporary name owned by this process. Where its identity cannot be read, the
/// name says namespace 0, which no sweeper claims.
pub fn temp_name() -> CString {
    let me = this_process().unwrap_or(Owner {
        ns: 0,
        pid: std::process::id(),
        start: 0,
    });
    let name = format!(
        "{PREFIX}{}-{}-{}-{:016x}",
        me.ns,
        me.pid,
        me.start,
        random()
    );
    CString::new(name).expect("no NUL in a formatted name")
}

/// The owner a temporary name records; `None` for any other name.
fn owner_of(name: &[u8]) -> Option<Owner> {
    let rest = std::str::from_utf8(name).ok()?.strip_prefix(PREFIX)?;
    let mut parts = rest.split('-');
    let owner = Owner {
        ns: parts.next()?.parse().ok()?,
        pid: parts.next()?.parse().ok()?,
        start: parts.next()?.parse().ok()?,
    };
    let random = parts.next()?;
    let well_formed = random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit());
    (well_formed && parts.next().is_none()).then_some(owner)
}

fn is_gone(owner: &Owner) -> bool {
    start_time(&owner.pid.to_string()) != Some(owner.start)
}

/// Names in `dir` that look like temporary files of this pid namespace.
fn candidates(dir: RawFd, ns: u64) -> Vec<(CString, Owner)> {
    let dot = c".";
    // SAFETY: opens the held directory itself for listing; the descriptor goes to
    // `fdopendir`, which owns it until `closedir`.
    let fd = unsafe {
        libc::openat(
            dir,
            dot.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Vec::new();
    }
    // SAFETY: `fd` is an open directory descriptor we own.
    let stream = unsafe { libc::fdopendir(fd) };
    if stream.is_null() {
        unsafe { libc::close(fd) };
        return Vec::new();
    }
    let mut found = Vec::new();
    loop {
        // SAFETY: `stream` is open; the entry is read before the next call.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            break;
        }
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        if let Some(owner) = owner_of(name.to_bytes()).filter(|o| o.ns == ns) {
            found.push((name.to_owned(), owner));
        }
    }
    // SAFETY: closes the stream (and its descriptor) once.
    unsafe { libc::closedir(stream) };
    found
}

fn is_regular_file(dir: RawFd, name: &CStr) -> bool {
    // SAFETY: `st` is a properly sized out-parameter; the name is one entry of `dir`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    rc == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG
}

/// Removes from `dir` (a held directory, `O_PATH` will do) the regular files named by
/// `temp_name` in this pid namespace whose process is gone; returns how many. Symlinks and
/// other kinds of file are left, and nothing is resolved beyond one name in `dir`.
pub fn sweep(dir: RawFd) -> usize {
    let Some(me) = this_process() else {
        return 0;
    };
    candidates(dir, me.ns)
        .into_iter()
        .filter(|(name, owner)| is_gone(owner) && is_regular_file(dir, name))
        // SAFETY: removes one name inside the held directory.
        .filter(|(name, _)| unsafe { libc::unlinkat(dir, name.as_ptr(), 0) } == 0)
        .count()
}

/// Directories swept by this process, by device and inode; forgotten in bulk past this.
const SWEPT_KEPT: usize = 4096;

/// `sweep`, once per directory per process: what a process that died left is found by the
/// first write into that directory of a later one, and a write into a large directory
/// does not list it each time.
pub fn sweep_once(dir: RawFd) -> usize {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static SWEPT: OnceLock<Mutex<HashSet<(u64, u64)>>> = OnceLock::new();
    // SAFETY: `st` is a properly sized out-parameter for the held directory.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(dir, &mut st) } != 0 {
        return sweep(dir);
    }
    let mut swept = SWEPT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if swept.len() >= SWEPT_KEPT {
        swept.clear();
    }
    // `st_dev` is a `u64` on Linux, an `i32` on macOS.
    #[allow(clippy::unnecessary_cast)]
    let dev = st.st_dev as u64;
    match swept.insert((dev, st.st_ino)) {
        true => sweep(dir),
        false => 0,
    }
}

#[cfg(test)]
#[path = "temp_names_tests.rs"]
mod tests;
