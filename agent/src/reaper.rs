//! A command's reaper: the child `serve` forks for it. It makes itself a child subreaper and
//! a session leader, starts the command (as the asked user, in the asked directory; a
//! clone that shares its memory until the command's `execve`, as `posix_spawn` does), and
//! then reaps: every process of the command's tree that loses its parent becomes its
//! child, so none can leave the tree. Its socket to `serve` (fd 3) carries `Report`s: the
//! command started or could not, then its exit status. When that socket ends (`serve` is
//! gone without killing the command) it execs this binary as `reaper-kill`, which kills
//! the tree. Forked from a multi-threaded process, it makes system calls only: every
//! string and array it uses was made by `Launch` before the fork.

use super::launch::{Launch, Pointers, ReaperFds};
use super::reaper_report::Report;
use super::tree;

/// The reaper's descriptors after `settle_fds`: its socket to `serve`, the command's
/// stdin, stdout and stderr, and `/dev/null` (the reaper's own stdio).
const CHANNEL: i32 = 3;
const CMD_STDIN: i32 = 4;
const CMD_STDOUT: i32 = 5;
const CMD_STDERR: i32 = 6;
const NULL: i32 = 7;
const FIRST_FREE: i32 = 8;

fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Writes `report` to `serve` (which may be gone: then it is lost, as nobody is left).
fn report(report: Report) {
    let bytes = report.to_bytes();
    // SAFETY: writes a stack buffer to our socket.
    unsafe { libc::write(CHANNEL, bytes.as_ptr().cast(), bytes.len()) };
}

/// Moves the descriptors the reaper keeps to 3–7 and closes every other one (a forked child
/// inherits all of `serve`'s, close-on-exec or not: another command's stdin pipe held here
/// would never end). `Err(errno)` before anything moved, `Err(0)` after.
unsafe fn settle_fds(fds: &ReaperFds) -> Result<(), i32> {
    let sources = [fds.channel, fds.stdin, fds.stdout, fds.stderr, fds.null];
    let mut high = [0; 5];
    for (slot, fd) in high.iter_mut().zip(sources) {
        *slot = libc::fcntl(fd, libc::F_DUPFD, FIRST_FREE);
        if *slot < 0 {
            return Err(errno());
        }
    }
    for (target, fd) in (CHANNEL..).zip(high) {
        if libc::dup2(fd, target) < 0 {
            return Err(0);
        }
    }
    close_from(FIRST_FREE).map_err(|_| 0)?;
    for target in 0..3 {
        libc::dup2(NULL, target);
    }
    Ok(())
}

/// Closes every descriptor from `first` on: `close_range`, or else each one `/proc/self/fd`
/// lists (read with `getdents64` into a stack buffer).
unsafe fn close_from(first: i32) -> Result<(), i32> {
    if libc::syscall(libc::SYS_close_range, first as u32, u32::MAX, 0) == 0 {
        return Ok(());
    }
    close_listed(first)
}

/// `close_from` for kernels without `close_range` (before 5.9).
unsafe fn close_listed(first: i32) -> Result<(), i32> {
    let dir = libc::open(
        c"/proc/self/fd".as_ptr(),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    );
    if dir < 0 {
        return Err(errno());
    }
    let mut buf = [0u8; 4096];
    loop {
        let n = libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len());
        if n <= 0 {
            break;
        }
        let mut at = 0usize;
        while at < n as usize {
            // linux_dirent64: ino u64, off i64, reclen u16, type u8, name (NUL-terminated).
            let reclen = u16::from_ne_bytes([buf[at + 16], buf[at + 17]]) as usize;
            let fd = buf[at + 19..at + reclen]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .fold(0i32, |n, b| {
                    n.saturating_mul(10).saturating_add((b - b'0') as i32)
                });
            if buf[at + 19].is_ascii_digit() && fd >= first && fd != dir {
                libc::close(fd);
            }
            at += reclen;
        }
    }
    libc::close(dir);
    Ok(())
}

/// The command's side of the clone: its stdio, user and directory, then `execve` of each
/// candidate path. Returns only if none can be run, with the reason's `errno`. It shares
/// the reaper's memory until it execs: it only makes system calls (raw ones for the ids,
/// which glibc's wrappers would apply to every thread they know of) and writes nothing but
/// its own stack.
unsafe fn exec_command(launch: &Launch, p: &Pointers) -> i32 {
    let mut none: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut none);
    libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    // Rust ignores SIGPIPE in `serve`; a command gets the default, as from a shell.
    libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    for (target, fd) in [(0, CMD_STDIN), (1, CMD_STDOUT), (2, CMD_STDERR)] {
        if libc::dup2(fd, target) < 0 {
            return errno();
        }
    }
    // The rest (the signalfd) is close-on-exec.
    for fd in CHANNEL..FIRST_FREE {
        libc::close(fd);
    }
    if launch.terminal && (libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) != 0) {
        return errno();
    }
    if libc::syscall(
        libc::SYS_setgroups,
        launch.groups.len(),
        launch.groups.as_ptr(),
    ) != 0
        || libc::syscall(libc::SYS_setgid, launch.gid) != 0
        || libc::syscall(libc::SYS_setuid, launch.uid) != 0
        || (!p.cwd.is_null() && libc::chdir(p.cwd) != 0)
    {
        return errno();
    }
    exec_any(p)
}

/// `execve` of each candidate path, as `execvp` does: a missing one is skipped, a denied one
/// remembered (`EACCES` if nothing ran), any other failure is the answer. Returns only on
/// failure, with its `errno`.
unsafe fn exec_any(p: &Pointers) -> i32 {
    let mut last = libc::ENOENT;
    let mut denied = false;
    for candidate in p.candidates.iter().take_while(|c| !c.is_null()) {
        libc::execve(*candidate, p.argv.as_ptr(), p.env.as_ptr());
        last = errno();
        match last {
            libc::EACCES => denied = true,
            libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
            _ => return last,
        }
    }
    if denied {
        libc::EACCES
    } else {
        last
    }
}

/// The stack the command's side of the clone runs on until it execs.
const CHILD_STACK: usize = 256 * 1024;

/// What the command's side of the clone is given, and where it leaves a failure's `errno`
/// (in the reaper's memory, which it shares until it execs).
struct Child<'a> {
    launch: &'a Launch,
    pointers: &'a Pointers,
    failure: i32,
}

extern "C" fn command_side(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `Child` of `start_command`, whose frame waits for this side to
    // exec or exit (`CLONE_VFORK`).
    unsafe {
        let child = &mut *arg.cast::<Child<'_>>();
        let failure = exec_command(child.launch, child.pointers);
        std::ptr::write_volatile(&mut child.failure, failure);
    }
    127
}

/// Starts the command: `Ok(pid)` once it has exec'd, else the `errno` it reported. The
/// command's process shares the reaper's memory until its `execve` (as `posix_spawn` does),
/// so no page table is copied and the reaper resumes the moment the command runs.
unsafe fn start_command(launch: &Launch, p: &Pointers) -> Result<i32, i32> {
    let stack = libc::mmap(
        std::ptr::null_mut(),
        CHILD_STACK,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
        -1,
        0,
    );
    if stack == libc::MAP_FAILED {
        return Err(errno());
    }
    let mut child = Child {
        launch,
        pointers: p,
        failure: 0,
    };
    let pid = libc::clone(
        command_side,
        stack.cast::<u8>().add(CHILD_STACK).cast(),
        libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
        (&mut child as *mut Child<'_>).cast(),
    );
    let clone_errno = errno();
    libc::munmap(stack, CHILD_STACK);
    for fd in [CMD_STDIN, CMD_STDOUT, CMD_STDERR] {
        libc::close(fd);
    }
    if pid < 0 {
        return Err(clone_errno);
    }
    let failure = std::ptr::read_volatile(&child.failure);
    if failure != 0 {
        let mut ignored = 0;
        libc::waitpid(pid, &mut ignored, 0);
        return Err(failure);
    }
    Ok(pid)
}

/// The forked reaper's whole life; never returns.
pub fn run(
    launch: &Launch,
    p: &Pointers,
    fds: &ReaperFds,
    kill_argv: &[*const libc::c_char; 3],
) -> ! {
    // SAFETY: system calls on this (single-threaded, forked) process and on data prepared
    // before the fork.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        libc::setsid();
        if let Err(errno) = settle_fds(fds) {
            // Reported on the socket's old number if the moves had not begun; else `serve`
            // sees the reaper end without a report, as if it had been killed.
            if errno != 0 {
                let bytes = Report::Failed { errno }.to_bytes();
                libc::write(fds.channel, bytes.as_ptr().cast(), bytes.len());
            }
            libc::_exit(0);
        }
        let mut chld: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut chld);
        libc::sigaddset(&mut chld, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &chld, std::ptr::null_mut());
        let signals = libc::signalfd(-1, &chld, libc::SFD_CLOEXEC);
        let command = match start_command(launch, p) {
            Ok(pid) => pid,
            Err(errno) => {
                report(Report::Failed { errno });
                libc::_exit(0);
            }
        };
        report(Report::Spawned { pid: command });
        reap(command, signals, kill_argv)
    }
}

/// Collects every child until none is left, reporting the command's status; execs
/// `reaper-kill` if `serve` goes away first.
unsafe fn reap(command: i32, signals: i32, kill_argv: &[*const libc::c_char; 3]) -> ! {
    let mut polls = [
        libc::pollfd {
            fd: CHANNEL,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: signals,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let mut scratch = [0u8; 512];
    loop {
        loop {
            let mut status = 0;
            let reaped = libc::waitpid(-1, &mut status, libc::WNOHANG);
            if reaped == command {
                report(Report::Exited { status });
            } else if reaped == 0 {
                break;
            } else if reaped < 0 && errno() != libc::EINTR {
                libc::_exit(0);
            }
        }
        if libc::poll(polls.as_mut_ptr(), 2, -1) < 0 {
            continue;
        }
        if polls[1].revents != 0 {
            libc::read(signals, scratch.as_mut_ptr().cast(), scratch.len());
        }
        if polls[0].revents != 0 {
            let n = libc::read(CHANNEL, scratch.as_mut_ptr().cast(), scratch.len());
            if n <= 0 {
                let no_env = [std::ptr::null()];
                libc::execve(kill_argv[0], kill_argv.as_ptr(), no_env.as_ptr());
                libc::_exit(1);
            }
        }
    }
}

/// `agent reaper-kill`: what a reaper whose `serve` is gone becomes (same pid, same
/// children, still their subreaper): kills the tree, then collects it.
pub fn kill_mode() -> i32 {
    // SAFETY: getpid has no failure mode; waitpid waits for children of this process.
    unsafe {
        tree::kill_all(libc::getpid());
        let mut status = 0;
        while libc::waitpid(-1, &mut status, 0) > 0 || errno() == libc::EINTR {}
    }
    0
}

/// Forks the reaper of `launch`; returns its pid. `agent` is this binary's path (the reaper
/// execs it to kill the command's tree when `serve` is gone).
pub fn fork_reaper(launch: &Launch, fds: &ReaperFds, agent: &std::ffi::CStr) -> std::io::Result<i32> {
    let pointers = launch.pointers();
    let kill_argv = [agent.as_ptr(), c"reaper-kill".as_ptr(), std::ptr::null()];
    // SAFETY: the child runs `reaper::run`, which makes only system calls on the data
    // prepared above (still mapped in the child) and never returns.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()),
        0 => run(launch, &pointers, fds, &kill_argv),
        pid => Ok(pid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_descriptors_from_the_first_on_are_closed() {
        let low = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY) };
        let high = unsafe { libc::fcntl(low, libc::F_DUPFD, 200) };
        assert!(low >= 0 && high >= 200);
        // In a child, so that this test process keeps its descriptors.
        match unsafe { libc::fork() } {
            0 => unsafe {
                let closed = close_listed(200).is_ok()
                    && libc::fcntl(high, libc::F_GETFD) < 0
                    && libc::fcntl(low, libc::F_GETFD) >= 0;
                libc::_exit(if closed { 0 } else { 1 })
            },
            child => {
                let mut status = 0;
                unsafe { libc::waitpid(child, &mut status, 0) };
                assert_eq!(libc::WEXITSTATUS(status), 0);
                unsafe { libc::close(high) };
                unsafe { libc::close(low) };
            }
        }
    }
}
