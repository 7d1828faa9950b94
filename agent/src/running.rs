//! What the host may still do to a started command (`Running`): signal or kill its tree,
//! feed its stdin, size its terminal; and the registry of them by request id.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};

use super::tree;

/// What the host may still do to a command: signal its tree, feed its stdin.
pub struct Running {
    pub reaper: i32,
    stdin: Mutex<Option<Sender<Option<Vec<u8>>>>>,
    /// Whether the reaper has reported the command started (or failed to, or died):
    /// until then its tree may not have the command in it yet, and a signal would miss it.
    started: Mutex<bool>,
    reported: Condvar,
    /// A terminal's master side, which `resize` sizes.
    terminal: Option<std::fs::File>,
}

pub type Registry = Arc<Mutex<HashMap<u32, Arc<Running>>>>;

impl Running {
    pub fn new(
        reaper: i32,
        stdin: Option<Sender<Option<Vec<u8>>>>,
        terminal: Option<std::fs::File>,
    ) -> Running {
        Running {
            reaper,
            stdin: Mutex::new(stdin),
            started: Mutex::new(false),
            reported: Condvar::new(),
            terminal,
        }
    }

    /// Sets a terminal's size (the kernel signals `SIGWINCH` to its foreground group).
    pub fn resize(&self, cols: u16, rows: u16) {
        if let Some(master) = &self.terminal {
            let size = libc::winsize {
                ws_row: rows,
                ws_col: cols,
                ws_xpixel: 0,
                ws_ypixel: 0,
            };
            // SAFETY: TIOCSWINSZ reads one winsize from the given pointer.
            unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCSWINSZ, &size) };
        }
    }

    pub fn stdin(&self, data: Option<Vec<u8>>) {
        let mut stdin = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sender) = stdin.as_ref() {
            let _ = sender.send(data.clone());
        }
        if data.is_none() {
            *stdin = None;
        }
    }

    /// Signals the tree once the command has started (so that `Signalled` follows
    /// `Spawned`, and a signal sent right after `Spawn` is not lost).
    pub fn signal(&self, signo: i32) -> u32 {
        self.wait_started();
        tree::signal(self.reaper, signo)
    }

    /// Kills the tree once the command has started (see `signal`).
    pub fn kill(&self) -> u32 {
        self.wait_started();
        tree::kill_all(self.reaper)
    }

    pub fn mark_started(&self) {
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.reported.notify_all();
    }

    fn wait_started(&self) {
        let started = self.started.lock().unwrap_or_else(|e| e.into_inner());
        let _started = self
            .reported
            .wait_while(started, |started| !*started)
            .unwrap_or_else(|e| e.into_inner());
    }
}


/// Runs `relay` (the command's output to the host) on a thread of its own, then lets the
/// reaper `reaper` go and collects it: our end of its socket stays open until then (its
/// closing tells the reaper that `serve` is gone, and that it must kill what is left), and
/// `id` leaves the registry. Without a thread to relay it, the reaper (and the command) go
/// at once and the host hears why.
pub fn supervise(
    id: u32,
    reaper: i32,
    mut socket: std::fs::File,
    registry: &Registry,
    windows: &super::reply_window::Windows,
    running: Arc<Running>,
    relay: impl FnOnce(&mut std::fs::File) + Send + 'static,
) -> std::io::Result<()> {
    let (registry_there, windows_there) = (registry.clone(), windows.clone());
    let spawned = super::detached::spawn(move || {
        relay(&mut socket);
        windows_there.finish(id);
        running.mark_started();
        let mut status = 0;
        // SAFETY: waits for our own child.
        unsafe { libc::waitpid(reaper, &mut status, 0) };
        drop(socket);
        registry_there.lock().unwrap().remove(&id);
    });
    if let Err(e) = spawned {
        // SAFETY: our own child, killed and collected.
        unsafe {
            libc::kill(reaper, libc::SIGKILL);
            libc::waitpid(reaper, std::ptr::null_mut(), 0);
        }
        registry.lock().unwrap().remove(&id);
        windows.finish(id);
        return Err(e);
    }
    Ok(())
}
