//! One running `ssh`: its stdin and stdout are the git stream, its stderr is kept (bounded)
//! for the error message, a watchdog kills it at the transfer's deadline, and dropping it
//! leaves no process behind.

use std::io::{self, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The most of ssh's stderr kept for an error message.
pub(super) const STDERR_LIMIT: usize = 4096;

/// How long a closed ssh gets to exit by itself before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

pub(super) struct SshProcess {
    child: Arc<Mutex<Child>>,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<JoinHandle<()>>,
    watchdog: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
    timed_out: Arc<AtomicBool>,
    deadline: Instant,
}

/// How an ssh that stopped talking ended.
pub(super) struct Ending {
    pub status: Option<ExitStatus>,
    pub stderr: String,
    pub timed_out: bool,
}

impl SshProcess {
    pub fn spawn(mut command: Command, deadline: Instant) -> io::Result<SshProcess> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn()?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| io::Error::other("no ssh stdout"))?;
        let stderr_pipe = child
            .stderr
            .take()
            .ok_or_else(|| io::Error::other("no ssh stderr"))?;
        let child = Arc::new(Mutex::new(child));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let timed_out = Arc::new(AtomicBool::new(false));
        let stderr_reader = spawn_stderr_reader(stderr_pipe, stderr.clone())?;
        let watchdog = spawn_watchdog(child.clone(), deadline, timed_out.clone())?;
        Ok(SshProcess {
            child,
            stdin,
            stdout: Some(stdout),
            stderr,
            stderr_reader: Some(stderr_reader),
            watchdog: Some(watchdog),
            timed_out,
            deadline,
        })
    }

    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.stdout {
            Some(stdout) => stdout.read(buf),
            None => Ok(0),
        }
    }

    pub fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.stdin {
            Some(stdin) => stdin.write_all(buf),
            None => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
        }
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.stdin.as_mut().map_or(Ok(()), |stdin| stdin.flush())
    }

    /// Waits (until the deadline, when the watchdog kills it) for ssh to exit, and says how.
    pub fn ending(&mut self) -> Ending {
        self.stdin = None;
        let status = self.wait_until(self.deadline + Duration::from_secs(1));
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        let stderr = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        Ending {
            status,
            stderr: String::from_utf8_lossy(&stderr).trim().to_string(),
            timed_out: self.timed_out.load(Ordering::SeqCst),
        }
    }

    fn wait_until(&self, until: Instant) -> Option<ExitStatus> {
        loop {
            if let Ok(Some(status)) = self.lock_child().try_wait() {
                return Some(status);
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn lock_child(&self) -> std::sync::MutexGuard<'_, Child> {
        self.child.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for SshProcess {
    fn drop(&mut self) {
        // As git does: close both pipes, then wait for ssh to exit.
        self.stdin = None;
        self.stdout = None;
        let grace = (Instant::now() + EXIT_GRACE).min(self.deadline);
        if self.wait_until(grace).is_none() {
            let mut child = self.lock_child();
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some((stop, watchdog)) = self.watchdog.take() {
            drop(stop);
            let _ = watchdog.join();
        }
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
    }
}

fn spawn_stderr_reader(
    mut pipe: std::process::ChildStderr,
    kept: Arc<Mutex<Vec<u8>>>,
) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name("ssh-stderr".into())
        .spawn(move || {
            let mut buf = [0u8; 1024];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                let room = STDERR_LIMIT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        })
}

fn spawn_watchdog(
    child: Arc<Mutex<Child>>,
    deadline: Instant,
    timed_out: Arc<AtomicBool>,
) -> io::Result<(mpsc::Sender<()>, JoinHandle<()>)> {
    let (stop, stopped) = mpsc::channel::<()>();
    let handle = std::thread::Builder::new()
        .name("ssh-watchdog".into())
        .spawn(move || {
            let wait = deadline.saturating_duration_since(Instant::now());
            if let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(wait) {
                let mut child = child.lock().unwrap_or_else(|e| e.into_inner());
                if let Ok(None) = child.try_wait() {
                    timed_out.store(true, Ordering::SeqCst);
                    let _ = child.kill();
                }
            }
        })?;
    Ok((stop, handle))
}
