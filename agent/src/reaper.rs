//! `agent reaper`: runs one command for `serve`. It makes itself a child subreaper and a
//! session leader, spawns the command as the asked user in the asked directory, and then
//! reaps: every process of the command's tree that loses its parent becomes its child, so
//! none can leave the tree. Its fd 3 is a socket to `serve`: the command's `Spawn` comes in
//! first; its pid (or why it could not start), then its exit status, go back. When that
//! socket ends (`serve` is gone without killing the command), the reaper kills the tree.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use container_isolation_agent::protocol::{encode, FrameBuffer, Message, Spawn, CONTROL};

use super::tree;

const CHANNEL_FD: i32 = 3;

fn receive(channel: &mut std::fs::File) -> Option<Spawn> {
    let mut frames = FrameBuffer::default();
    let mut buf = [0u8; 8192];
    loop {
        if let Some(frame) = frames.next_frame() {
            return match frame {
                Ok((_, Message::Spawn(spawn))) => Some(spawn),
                _ => None,
            };
        }
        let n = channel.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        frames.push(&buf[..n]);
    }
}

/// The command, with everything it needs prepared before the fork (the child may only make
/// system calls between fork and exec).
fn command(spawn: &Spawn) -> std::io::Result<Command> {
    let program = spawn
        .argv
        .first()
        .ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut command = Command::new(program);
    command.args(&spawn.argv[1..]);
    if spawn.replace_env {
        command.env_clear();
    } else if let Some(home) = &spawn.home {
        command.env("HOME", home);
    }
    command.envs(spawn.env.iter().map(|(k, v)| (k, v)));
    command.stdin(if spawn.stdin {
        Stdio::inherit()
    } else {
        Stdio::null()
    });
    let groups: Vec<libc::gid_t> = spawn.creds.groups.clone();
    let (uid, gid) = (spawn.creds.uid, spawn.creds.gid);
    let cwd = spawn
        .cwd
        .as_deref()
        .map(CString::new)
        .transpose()
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: only async-signal-safe system calls, on data prepared above.
    unsafe {
        command.pre_exec(move || {
            if libc::setgroups(groups.len(), groups.as_ptr()) != 0
                || libc::setgid(gid) != 0
                || libc::setuid(uid) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(cwd) = &cwd {
                if libc::chdir(cwd.as_ptr()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    Ok(command)
}

/// Points fds 0–2 at /dev/null, so that only the command holds the output pipes.
fn release_stdio() {
    let null = CString::new("/dev/null").unwrap();
    // SAFETY: opens and duplicates file descriptors of this process.
    unsafe {
        let fd = libc::open(null.as_ptr(), libc::O_RDWR);
        if fd >= 0 {
            for target in 0..3 {
                libc::dup2(fd, target);
            }
            if fd > 2 {
                libc::close(fd);
            }
        }
    }
}

fn exit_message(status: libc::c_int) -> Message {
    if libc::WIFSIGNALED(status) {
        let signal = libc::WTERMSIG(status);
        Message::Exited {
            code: 128 + signal,
            signal,
        }
    } else {
        Message::Exited {
            code: libc::WEXITSTATUS(status),
            signal: 0,
        }
    }
}

/// `serve` keeps its end of the socket open for as long as this reaper lives, and sends
/// nothing more on it: its end (the agent was killed) means no one is left to end the
/// command, so the reaper kills the command's tree itself, and then exits.
fn kill_when_serve_is_gone(mut channel: std::fs::File) {
    let mut buf = [0u8; 64];
    loop {
        match channel.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    // SAFETY: getpid has no failure mode.
    tree::kill_all(unsafe { libc::getpid() });
}

pub fn run() -> i32 {
    // SAFETY: fd 3 is the socket `serve` handed us; we own it from here.
    let mut channel = unsafe { std::fs::File::from_raw_fd(CHANNEL_FD) };
    let Some(spawn) = receive(&mut channel) else {
        return 2;
    };
    // SAFETY: marks our own fd close-on-exec, so that the command does not inherit it.
    unsafe { libc::fcntl(CHANNEL_FD, libc::F_SETFD, libc::FD_CLOEXEC) };
    // SAFETY: plain system calls on this process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        libc::setsid();
    }
    let started = command(&spawn).and_then(|mut c| c.spawn());
    let child = match started {
        Ok(child) => child,
        Err(err) => {
            let message = Message::Failed {
                errno: err.raw_os_error().unwrap_or(libc::EINVAL),
                message: format!(
                    "exec {:?}: {err}",
                    spawn.argv.first().map(String::as_str).unwrap_or("")
                ),
            };
            let _ = channel.write_all(&encode(CONTROL, &message));
            return 0;
        }
    };
    let pid = child.id() as libc::pid_t;
    let _ = channel.write_all(&encode(CONTROL, &Message::Spawned { pid: pid as u32 }));
    release_stdio();
    if let Ok(watched) = channel.try_clone() {
        std::thread::spawn(move || kill_when_serve_is_gone(watched));
    }
    loop {
        let mut status = 0;
        // SAFETY: waits for any child of this process.
        let reaped = unsafe { libc::waitpid(-1, &mut status, 0) };
        if reaped == pid {
            let _ = channel.write_all(&encode(CONTROL, &exit_message(status)));
        } else if reaped < 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                return 0;
            }
        }
    }
}
