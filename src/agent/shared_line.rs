//! The direct line offered to another process of the agent's binary in a container — the
//! egress relay (`agent relay`, in an exec of its own) — through the same listener and the
//! same checks as the agent's own (`agent_line`): the peer must be that very process in the
//! container (the pid its `Welcome` gave), presenting a token made for this offer, and the
//! first connection decides. This is the one door the egress module has into the line.

use std::future::Future;

use container_isolation_agent::protocol::Message;
use tokio::net::UnixStream;

use super::agent_line::{negotiate, LineOffer, LineRequest, Negotiated};
use super::agent_pool::shared_listener;
use crate::engine::Engine;

/// Why the line was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoLine {
    pub why: String,
    /// The process took a line that is not this host's: what it says from now on goes
    /// elsewhere, so its exec is useless and it must be started again without the offer.
    pub broken: bool,
}

impl NoLine {
    fn kept(why: String) -> NoLine {
        NoLine { why, broken: false }
    }
}

/// Offers the direct line of `container` to the process `request` describes, whose frames
/// go out through `request.outgoing` and whose answer to `Line` is `request.answer`; the
/// admitted socket, or why the exec stream stays.
pub async fn offer_line<A: Future<Output = Option<Message>>>(
    engine: &Engine,
    container: &str,
    request: LineRequest<'_, A>,
) -> Result<UnixStream, NoLine> {
    let inspected = engine
        .inspect_container(container, &format!("container '{container}'"))
        .await
        .map_err(|e| NoLine::kept(e.message))?;
    let (listener, init_pid) = shared_listener(engine, container, &inspected)
        .await
        .map_err(NoLine::kept)?;
    let offer = LineOffer {
        listener: &listener,
        init_pid,
        engine_id: inspected.id.clone().unwrap_or_default(),
    };
    match negotiate(&offer, request).await {
        Negotiated::Direct(stream) => Ok(stream),
        Negotiated::Exec(why) => Err(NoLine::kept(why)),
        Negotiated::Broken(why) => Err(NoLine { why, broken: true }),
    }
}
