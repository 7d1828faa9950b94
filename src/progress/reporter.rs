//! `Progress`: where events go, with each phase's stream of events thinned to at most one
//! per `INTERVAL`; the last of a stream is kept and delivered when the stream ends. Steps
//! (one event each) are never thinned.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::progress_event::{Phase, ProgressEvent};

/// At most ten events a second per phase, plus the last.
pub const INTERVAL: Duration = Duration::from_millis(100);

/// Receives the events; called on whichever thread reports, so it must not block.
pub trait ProgressSink: Send + Sync {
    fn event(&self, event: ProgressEvent);
}

/// A sink as options hold it, before a session is known.
#[derive(Clone)]
pub struct ProgressTarget(pub Arc<dyn ProgressSink>);

impl std::fmt::Debug for ProgressTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressTarget")
    }
}

impl ProgressTarget {
    /// The session's `Progress` into this sink.
    pub fn for_session(&self, session_id: &str) -> Progress {
        Progress::new(self.0.clone(), session_id)
    }
}

#[derive(Default)]
struct PhaseState {
    last: Option<Instant>,
    pending: Option<ProgressEvent>,
}

struct Shared {
    sink: Arc<dyn ProgressSink>,
    session_id: String,
    phases: Mutex<HashMap<Phase, PhaseState>>,
}

/// Cheap to clone; a `Progress::none()` reports nothing.
#[derive(Clone, Default)]
pub struct Progress {
    shared: Option<Arc<Shared>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.shared.is_some() {
            "Progress(reporting)"
        } else {
            "Progress(none)"
        })
    }
}

impl Progress {
    pub fn none() -> Progress {
        Progress::default()
    }

    pub fn new(sink: Arc<dyn ProgressSink>, session_id: &str) -> Progress {
        Progress {
            shared: Some(Arc::new(Shared {
                sink,
                session_id: session_id.to_string(),
                phases: Mutex::default(),
            })),
        }
    }

    pub fn is_reporting(&self) -> bool {
        self.shared.is_some()
    }

    fn event(
        shared: &Shared,
        phase: Phase,
        detail: &str,
        bytes: Option<(u64, u64)>,
    ) -> ProgressEvent {
        ProgressEvent {
            session_id: shared.session_id.clone(),
            phase,
            detail: detail.to_string(),
            current: bytes.map(|b| b.0),
            total: bytes.map(|b| b.1),
        }
    }

    /// One step of `phase`: always delivered.
    pub fn step(&self, phase: Phase, detail: &str) {
        self.end(phase, Some((detail, None)));
    }

    /// One event of `phase`'s stream: delivered unless one was within `INTERVAL`, in
    /// which case it waits as the phase's last until the next is due or the stream ends.
    pub fn stream(&self, phase: Phase, detail: &str, bytes: Option<(u64, u64)>) {
        let Some(shared) = &self.shared else {
            return;
        };
        let event = Progress::event(shared, phase, detail, bytes);
        let now = Instant::now();
        let due = {
            let mut phases = shared.phases.lock().unwrap_or_else(|e| e.into_inner());
            let state = phases.entry(phase).or_default();
            if state
                .last
                .is_some_and(|at| now.duration_since(at) < INTERVAL)
            {
                state.pending = Some(event);
                None
            } else {
                state.last = Some(now);
                state.pending = None;
                Some(event)
            }
        };
        if let Some(event) = due {
            shared.sink.event(event);
        }
    }

    /// Delivers `phase`'s pending event if it is due (for a stream that went quiet).
    pub fn flush(&self, phase: Phase) {
        let Some(shared) = &self.shared else {
            return;
        };
        let now = Instant::now();
        let due = {
            let mut phases = shared.phases.lock().unwrap_or_else(|e| e.into_inner());
            let state = phases.entry(phase).or_default();
            let waited = state
                .last
                .is_none_or(|at| now.duration_since(at) >= INTERVAL);
            if waited && state.pending.is_some() {
                state.last = Some(now);
                state.pending.take()
            } else {
                None
            }
        };
        if let Some(event) = due {
            shared.sink.event(event);
        }
    }

    /// Ends `phase`'s stream: its pending last event is delivered, or `last` instead when
    /// given (e.g. a pull's `current === total`).
    pub fn finish(&self, phase: Phase, last: Option<(&str, Option<(u64, u64)>)>) {
        self.end(phase, last);
    }

    fn end(&self, phase: Phase, last: Option<(&str, Option<(u64, u64)>)>) {
        let Some(shared) = &self.shared else {
            return;
        };
        let pending = {
            let mut phases = shared.phases.lock().unwrap_or_else(|e| e.into_inner());
            let state = phases.entry(phase).or_default();
            state.last = None;
            state.pending.take()
        };
        match last {
            // The given last supersedes the pending one.
            Some((detail, bytes)) => shared
                .sink
                .event(Progress::event(shared, phase, detail, bytes)),
            None => {
                if let Some(event) = pending {
                    shared.sink.event(event);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect(Mutex<Vec<ProgressEvent>>);

    impl ProgressSink for Collect {
        fn event(&self, event: ProgressEvent) {
            self.0.lock().unwrap().push(event);
        }
    }

    #[test]
    fn a_burst_is_thinned_to_its_first_and_its_last() {
        let sink = Arc::new(Collect::default());
        let progress = Progress::new(sink.clone(), "s1");
        for n in 0..1000u64 {
            progress.stream(Phase::Pull, "img", Some((n, 1000)));
        }
        progress.step(Phase::Create, "creating");
        progress.finish(Phase::Pull, Some(("img", Some((1000, 1000)))));
        let events = sink.0.lock().unwrap();
        let pulls: Vec<_> = events.iter().filter(|e| e.phase == Phase::Pull).collect();
        assert_eq!(pulls.len(), 2, "{pulls:?}");
        assert_eq!(pulls[0].current, Some(0));
        assert_eq!((pulls[1].current, pulls[1].total), (Some(1000), Some(1000)));
        assert_eq!(
            events.iter().filter(|e| e.phase == Phase::Create).count(),
            1
        );
        assert!(events.iter().all(|e| e.session_id == "s1"));
    }

    #[test]
    fn a_stream_ended_without_a_last_event_delivers_its_pending_one() {
        let sink = Arc::new(Collect::default());
        let progress = Progress::new(sink.clone(), "s");
        progress.stream(Phase::Build, "Step 1/2", None);
        progress.stream(Phase::Build, "Step 2/2", None);
        progress.flush(Phase::Build);
        std::thread::sleep(INTERVAL);
        progress.stream(Phase::Build, "Step 3/3", None);
        progress.flush(Phase::Build);
        progress.finish(Phase::Build, None);
        let details: Vec<_> = sink
            .0
            .lock()
            .unwrap()
            .iter()
            .map(|e| e.detail.clone())
            .collect();
        assert_eq!(details, ["Step 1/2", "Step 3/3"]);
        Progress::none().stream(Phase::Build, "nowhere", None);
    }
}
