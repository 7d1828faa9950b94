//! Per-request reply windows on the command channel: a request's streamed replies (a
//! command's output, a file's data, a listing's names) are sent only while the host has
//! granted room for them (`Credit`), so a host consumer that falls behind holds up its own
//! request and nothing else. `Abort` closes a window: the host wants no more replies, and
//! the producer stops sending (a command's output is then read and dropped, so the command
//! does not block on a full pipe).

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

use container_isolation_agent::protocol::REPLY_WINDOW;

struct Room {
    bytes: i64,
    closed: bool,
}

pub struct Window {
    room: Mutex<Room>,
    changed: Condvar,
}

impl Window {
    fn new() -> Window {
        Window {
            room: Mutex::new(Room {
                bytes: i64::from(REPLY_WINDOW),
                closed: false,
            }),
            changed: Condvar::new(),
        }
    }

    fn room(&self) -> std::sync::MutexGuard<'_, Room> {
        self.room.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until there is room, then spends `cost` (the last reply may overdraw by its
    /// own size). `false` once the host has closed the window.
    pub fn spend(&self, cost: u32) -> bool {
        let room = self.room();
        let mut room = self
            .changed
            .wait_while(room, |r| r.bytes <= 0 && !r.closed)
            .unwrap_or_else(|e| e.into_inner());
        room.bytes -= i64::from(cost);
        !room.closed
    }

    /// Whether a reply may be sent now (without waiting).
    pub fn has_room(&self) -> bool {
        let room = self.room();
        room.bytes > 0 || room.closed
    }

    /// Spends `cost` without waiting (after `has_room`); `false` once closed.
    pub fn spend_now(&self, cost: u32) -> bool {
        let mut room = self.room();
        room.bytes -= i64::from(cost);
        !room.closed
    }

    fn grant(&self, bytes: u32) {
        self.room().bytes += i64::from(bytes);
        self.changed.notify_all();
    }

    fn close(&self) {
        self.room().closed = true;
        self.changed.notify_all();
    }
}

/// The open windows, by request id.
#[derive(Clone, Default)]
pub struct Windows(Arc<Mutex<HashMap<u32, Arc<Window>>>>);

impl Windows {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Arc<Window>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens request `id`'s window (on the reading thread, before any `Credit` for it).
    pub fn open(&self, id: u32) -> Arc<Window> {
        let window = Arc::new(Window::new());
        self.map().insert(id, window.clone());
        window
    }

    /// The producer is done with `id`'s window.
    pub fn finish(&self, id: u32) {
        self.map().remove(&id);
    }

    pub fn grant(&self, id: u32, bytes: u32) {
        if let Some(window) = self.map().get(&id) {
            window.grant(bytes);
        }
    }

    /// The host wants no more replies to `id`.
    pub fn close(&self, id: u32) {
        if let Some(window) = self.map().remove(&id) {
            window.close();
        }
    }

    /// The host is gone: every producer stops waiting.
    pub fn close_all(&self) {
        for (_, window) in self.map().drain() {
            window.close();
        }
    }
}
