//! Whether this process sees the container's bind mounts as the engine does. A unix socket
//! alone does not say so (the socket may be forwarded into another container or a VM), but
//! the container's main process, found in our `/proc` under a cgroup that names the
//! container, does: then we share the engine's host. Ownership given on the host means the
//! same inside the container only when its user namespace maps ids as ours does.

use std::fs;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostView {
    /// Uids and gids mean the same on the host and in the container.
    pub same_ids: bool,
}

/// Whether host process `pid` runs in the container `container_id`.
pub fn runs_in(pid: u32, container_id: &str) -> bool {
    !container_id.is_empty()
        && pid > 0
        && fs::read_to_string(format!("/proc/{pid}/cgroup"))
            .map(|cgroup| cgroup.contains(container_id))
            .unwrap_or(false)
}

/// `None` when the host cannot see the container's process `pid`.
pub fn host_view(pid: u32, container_id: &str) -> Option<HostView> {
    if !runs_in(pid, container_id) {
        return None;
    }
    let same = |map: &str| match (
        fs::read_to_string(format!("/proc/{pid}/{map}")),
        fs::read_to_string(format!("/proc/self/{map}")),
    ) {
        (Ok(theirs), Ok(ours)) => normalized(&theirs) == normalized(&ours),
        _ => false,
    };
    Some(HostView {
        same_ids: same("uid_map") && same("gid_map"),
    })
}

fn normalized(map: &str) -> Vec<Vec<&str>> {
    map.lines()
        .map(|line| line.split_whitespace().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_process_is_not_a_container() {
        assert!(!runs_in(std::process::id(), "0123456789abcdef"));
        assert!(!runs_in(0, "x"));
        assert_eq!(
            normalized("         0          0 4294967295\n"),
            vec![vec!["0", "0", "4294967295"]]
        );
    }
}
