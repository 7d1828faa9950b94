//! A server's response body on its way to the client, which reports its request's outcome
//! when it ends: read to the end, failed, or dropped because the client went away. The
//! bytes each way are what its origin connection carried meanwhile.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};

use super::destination_gate::Gate;
use super::origin_connection::Counters;
use super::relay_outcome::Outcome;

pub struct ReportedBody {
    inner: Incoming,
    report: Option<Report>,
}

struct Report {
    outcome: Outcome,
    gate: Arc<Gate>,
    counters: Arc<Counters>,
    /// The counters when the request was sent.
    from: (u64, u64),
}

impl ReportedBody {
    pub fn new(
        inner: Incoming,
        outcome: Outcome,
        gate: Arc<Gate>,
        counters: Arc<Counters>,
        from: (u64, u64),
    ) -> ReportedBody {
        ReportedBody {
            inner,
            report: Some(Report {
                outcome,
                gate,
                counters,
                from,
            }),
        }
    }

    fn finish(&mut self) {
        if let Some(Report {
            mut outcome,
            gate,
            counters,
            from,
        }) = self.report.take()
        {
            let (up, down) = counters.get();
            (outcome.up, outcome.down) = (up - from.0, down - from.1);
            outcome.report(&gate);
        }
    }
}

impl Body for ReportedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None) | Poll::Ready(Some(Err(_)))) {
            this.finish();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for ReportedBody {
    fn drop(&mut self) {
        self.finish();
    }
}
