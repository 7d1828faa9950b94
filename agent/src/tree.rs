//! A command's processes: every descendant of its reaper. The reaper is a child subreaper,
//! so a process that leaves the command's session or process group, clears its
//! environment, or loses its parent is still below it; `/proc`'s parent links find them
//! all, whatever they did.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long `kill_all` may go on at most, and its stopping passes of that. A stopped
/// process shows as stopped only once it has run again to take the signal: a fork bomb's
/// thousands of processes on a busy machine took more than 5 s (a CI run's fork bomb then
/// refilled its pids as fast as the kill passes freed them, for 30 s).
const KILL_BOUND: Duration = Duration::from_secs(30);
const STOP_BOUND: Duration = Duration::from_secs(20);

/// Parent and state letter of every living process visible in `/proc` (zombies are dead
/// already; their parent or the reaper collects them).
fn processes() -> HashMap<i32, (i32, char)> {
    let mut map = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return map;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = after.split_whitespace();
        let state = fields.next();
        if let (Some(state), Some(ppid)) = (state, fields.next().and_then(|p| p.parse().ok())) {
            if state != "Z" && state != "X" {
                map.insert(pid, (ppid, state.chars().next().unwrap_or('?')));
            }
        }
    }
    map
}

/// Every process below `root` (not `root` itself).
pub fn descendants(root: i32) -> Vec<i32> {
    below(root, |_| true)
}

/// Every process below `root` that may still fork: not stopped, nor in uninterruptible
/// sleep (which takes the stop when it wakes, and never shows as stopped before).
fn running_below(root: i32) -> Vec<i32> {
    below(root, |state| !matches!(state, 'T' | 't' | 'D'))
}

fn below(root: i32, keep: impl Fn(char) -> bool) -> Vec<i32> {
    let processes = processes();
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for (&pid, &(ppid, _)) in &processes {
        children.entry(ppid).or_default().push(pid);
    }
    let mut found = Vec::new();
    let mut pending = vec![root];
    while let Some(pid) = pending.pop() {
        for &child in children.get(&pid).into_iter().flatten() {
            if processes.get(&child).is_some_and(|(_, state)| keep(*state)) {
                found.push(child);
            }
            pending.push(child);
        }
    }
    found
}

/// Sends `signo` to every process below `root`; returns how many there were.
pub fn signal(root: i32, signo: i32) -> u32 {
    let pids = descendants(root);
    for &pid in &pids {
        // SAFETY: kill has no memory effects; a process gone meanwhile is ESRCH.
        unsafe { libc::kill(pid, signo) };
    }
    pids.len() as u32
}

/// Stops, then kills, every process below `root` until none is left, and returns how many
/// were killed. First every process is stopped, pass after pass, until a pass finds none
/// running: nothing dies meanwhile, so a fork bomb at its pids limit cannot fork into
/// freed pids, and a fork loop cannot outrun the stops. Only then are they killed.
pub fn kill_all(root: i32) -> u32 {
    let started = Instant::now();
    let deadline = started + KILL_BOUND;
    while started.elapsed() < STOP_BOUND {
        let running = running_below(root);
        if running.is_empty() {
            break;
        }
        for &pid in &running {
            // SAFETY: kill has no memory effects; a process gone meanwhile is ESRCH.
            unsafe { libc::kill(pid, libc::SIGSTOP) };
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    // A process killed in one pass may still be listed in the next (not reaped yet): each
    // counts once.
    let mut killed = std::collections::HashSet::new();
    while Instant::now() < deadline {
        let pids = descendants(root);
        if pids.is_empty() {
            break;
        }
        for &pid in &pids {
            // SAFETY: as above.
            unsafe {
                libc::kill(pid, libc::SIGSTOP);
                libc::kill(pid, libc::SIGKILL);
            }
        }
        killed.extend(pids);
        std::thread::sleep(Duration::from_millis(2));
    }
    killed.len() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_kills_children_and_grandchildren() {
        let mut parent = std::process::Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .spawn()
            .unwrap();
        let root = parent.id() as i32;
        for _ in 0..100 {
            if descendants(root).len() == 2 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(descendants(root).len(), 2);
        assert_eq!(kill_all(root), 2);
        parent.wait().unwrap();
    }
}
