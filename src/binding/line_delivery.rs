//! A host's `onOutput` bridged so that `execute` settles only once the JS thread has run
//! the callback for every line: each line is queued with a note of its delivery (calls of
//! one threadsafe function run in the order made), and the end waits until every note came.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use tokio::sync::Notify;

use super::container_types::OutputLine;
use super::runtime_calls::LineCallback;

#[derive(Default)]
struct Delivered {
    count: AtomicUsize,
    notify: Notify,
}

impl Delivered {
    fn one(&self) {
        self.count.fetch_add(1, Ordering::AcqRel);
        self.notify.notify_one();
    }
}

/// The lines of one command on their way to its `onOutput` (none when it has none).
pub struct LineDelivery {
    callback: Option<LineCallback>,
    sent: AtomicUsize,
    delivered: Arc<Delivered>,
}

impl LineDelivery {
    pub fn new(callback: Option<LineCallback>) -> Self {
        LineDelivery {
            callback,
            sent: AtomicUsize::new(0),
            delivered: Arc::default(),
        }
    }

    /// Queues `line` for the callback. A throw in it stays the host's uncaught exception.
    pub fn send(&self, line: OutputLine) {
        let Some(callback) = &self.callback else {
            return;
        };
        self.sent.fetch_add(1, Ordering::AcqRel);
        let delivered = self.delivered.clone();
        let status = callback.call_with_return_value(
            line,
            ThreadsafeFunctionCallMode::NonBlocking,
            move |returned, _env| {
                delivered.one();
                returned.map(drop)
            },
        );
        if status != napi::Status::Ok {
            self.delivered.one(); // never queued (the environment is closing)
        }
    }

    /// Resolves once the callback has run for every line sent; then releases it.
    pub async fn finished(self) {
        let sent = self.sent.load(Ordering::Acquire);
        while self.delivered.count.load(Ordering::Acquire) < sent {
            self.delivered.notify.notified().await;
        }
    }
}
