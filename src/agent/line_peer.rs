//! Who is at the other end of a direct line, asked of the kernel before a byte is trusted:
//! the peer's credentials (`SO_PEERCRED`, its pid as this host sees it), and from `/proc`
//! that this process is the container's agent — its cgroup names the container, its pid
//! namespace is the container's main process's (where this host may look), and its pid in
//! that namespace is the one the agent gave in its `Welcome`.
//!
//! Linux only, as the line is.

/// The process a line must come from.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct ExpectedPeer<'a> {
    /// The container's main process, as this host sees it.
    pub init_pid: u32,
    /// The agent's pid inside the container.
    pub agent_pid: u32,
    pub engine_id: &'a str,
}

#[cfg(target_os = "linux")]
fn proc_text(pid: u32, name: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(format!("/proc/{pid}/{name}"))?
        .take(64 * 1024)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// The pid in the innermost namespace, from a `/proc/<pid>/status` text.
#[cfg(target_os = "linux")]
fn innermost_pid(status: &str) -> Option<u32> {
    let line = status.lines().find(|l| l.starts_with("NSpid:"))?;
    line["NSpid:".len()..]
        .split_whitespace()
        .last()?
        .parse()
        .ok()
}

/// The (device, inode) of a process's pid namespace; `None` where this host may not look.
#[cfg(target_os = "linux")]
fn pid_namespace(pid: u32) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(format!("/proc/{pid}/ns/pid")).ok()?;
    Some((meta.dev(), meta.ino()))
}

/// `Ok` when the peer of `stream` is the expected agent, else why not.
#[cfg(target_os = "linux")]
pub fn check_peer(
    stream: &tokio::net::UnixStream,
    expected: &ExpectedPeer<'_>,
) -> Result<(), String> {
    let cred = stream
        .peer_cred()
        .map_err(|e| format!("the peer's credentials could not be read: {e}"))?;
    let pid = match cred.pid() {
        Some(pid) if pid > 0 => pid as u32,
        _ => {
            return Err(
                "the peer is in no pid namespace this host can see, so not in the container".into(),
            )
        }
    };
    let cgroup = proc_text(pid, "cgroup")
        .map_err(|e| format!("the peer (pid {pid} on this host) could not be looked at: {e}"))?;
    if expected.engine_id.is_empty() || !cgroup.contains(expected.engine_id) {
        return Err(format!(
            "the peer (pid {pid} on this host) is not in the container"
        ));
    }
    if let (Some(theirs), Some(container)) = (pid_namespace(pid), pid_namespace(expected.init_pid))
    {
        if theirs != container {
            return Err(format!(
                "the peer (pid {pid} on this host) is not in the container's pid namespace"
            ));
        }
    }
    let status = proc_text(pid, "status")
        .map_err(|e| format!("the peer (pid {pid} on this host) could not be looked at: {e}"))?;
    match innermost_pid(&status) {
        Some(inner) if inner == expected.agent_pid => Ok(()),
        Some(inner) => Err(format!(
            "the peer is pid {inner} in the container, not its agent (pid {})",
            expected.agent_pid
        )),
        None => Err(format!(
            "the peer's pid in the container is unknown (pid {pid} on this host)"
        )),
    }
}

#[cfg(not(target_os = "linux"))]
pub fn check_peer(
    _stream: &tokio::net::UnixStream,
    _expected: &ExpectedPeer<'_>,
) -> Result<(), String> {
    Err("no direct line off Linux".into())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_pid_is_the_last_of_nspid() {
        assert_eq!(innermost_pid("Name:\tx\nNSpid:\t4242\t17\n"), Some(17));
        assert_eq!(innermost_pid("NSpid:\t4242\n"), Some(4242));
        assert_eq!(innermost_pid("Name:\tx\n"), None);
    }

    #[tokio::test]
    async fn a_process_of_this_host_is_not_the_containers_agent() {
        let (ours, _theirs) = tokio::net::UnixStream::pair().unwrap();
        let expected = ExpectedPeer {
            init_pid: 1,
            agent_pid: std::process::id(),
            engine_id: "0123456789abcdef0123456789abcdef",
        };
        let why = check_peer(&ours, &expected).unwrap_err();
        assert!(why.contains("not in the container"), "{why}");
    }
}
