//! One agent per container per host process. The first call for a container starts its
//! agent — from the read-only bind mount (or the upload made at creation, on engines that
//! cannot see this machine's files) of containers this library created, else uploaded to a
//! private path — and later calls reuse the connection until it closes (the container
//! stopped or was removed). A container where the agent cannot run is remembered by its
//! engine id, so later calls go straight to the engine path; so is one whose agent failed
//! (broke the protocol, stopped answering, died with requests open) `STRIKES` times within
//! `STRIKE_WINDOW`. Either is tried again after `COOLDOWN`, and a successful start restores
//! the agent path.
//!
//! Where the engine shares this machine's kernel and the container has a line folder, each
//! start is offered the direct line (`agent_line`); the cell keeps this process's socket in
//! that folder for the container's later starts. `close_container` (a stop or removal
//! through this library) closes the connection and the socket at once.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bollard::models::ContainerInspectResponse;

use super::agent_binary::{disabled, SWITCHED_OFF};
use super::agent_connection::AgentConnection;
use super::agent_upload::upload_and_start;
use super::line_listener::LineListener;
use super::line_offer::line_offer;
use crate::engine::Engine;
use crate::error::{ErrorCode, Result};
use crate::runtime::labels::agent_uploaded;
use crate::runtime::{bind_mounts_with_agent, swappable_mount, AGENT_MOUNT};

/// Agent failures within `STRIKE_WINDOW` that send a container to the engine path.
const STRIKES: usize = 3;
const STRIKE_WINDOW: Duration = Duration::from_secs(60);
/// How long a container stays on the engine path before its agent is tried again.
const COOLDOWN: Duration = Duration::from_secs(60);

#[derive(Clone)]
enum Slot {
    Ready {
        connection: Arc<AgentConnection>,
    },
    /// `retry_at`: `None` for what will not change (no agent for the architecture...).
    Unavailable {
        engine_id: String,
        why: String,
        retry_at: Option<Instant>,
    },
}

/// A container's agent, and its recent failures.
#[derive(Default)]
struct CellState {
    slot: Option<Slot>,
    strikes: VecDeque<(Instant, String)>,
    /// This process's socket in the container's line folder (shared with the egress
    /// relay's offer while one runs).
    listener: Option<Arc<LineListener>>,
}

impl CellState {
    /// Counts the failure of a connection that closed, if it failed.
    fn count_failure(&mut self) {
        let Some(Slot::Ready { connection }) = &self.slot else {
            return;
        };
        if let Some(why) = connection.failure() {
            self.strikes.push_back((Instant::now(), why));
        }
    }

    /// Why the agent is not to be tried now, after repeated failures.
    fn struck_out(&mut self) -> Option<String> {
        while self
            .strikes
            .front()
            .is_some_and(|(at, _)| at.elapsed() > STRIKE_WINDOW)
        {
            self.strikes.pop_front();
        }
        if self.strikes.len() < STRIKES {
            return None;
        }
        let (_, last) = self.strikes.back()?;
        let why = format!(
            "the session agent failed {} times within {} s (last: it {last}); calls take the engine path for {} s, then the agent is tried again",
            self.strikes.len(),
            STRIKE_WINDOW.as_secs(),
            COOLDOWN.as_secs()
        );
        self.strikes.clear();
        Some(why)
    }
}

/// How a container's operations are carried out, as `doctor` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentAccess {
    /// `exec_why`: why requests take the exec stream, not the direct line; `None` when they
    /// take the line.
    Agent {
        path: String,
        pid: u32,
        exec_why: Option<String>,
    },
    Engine {
        why: String,
    },
}

type Key = (String, String);

/// One container's entry: its engine id (once seen), so that a stop or removal by another
/// of its names finds it, and its state.
#[derive(Default)]
struct CellEntry {
    engine_id: Mutex<String>,
    state: tokio::sync::Mutex<CellState>,
}

type Cell = Arc<CellEntry>;

fn pool() -> &'static Mutex<HashMap<Key, Cell>> {
    static POOL: OnceLock<Mutex<HashMap<Key, Cell>>> = OnceLock::new();
    POOL.get_or_init(Default::default)
}

/// The agent of `container`, started on first use; `None` when it cannot run there (the
/// caller then uses the engine path). Errors are the engine's (no such container...).
pub async fn agent_for(engine: &Engine, container: &str) -> Result<Option<Arc<AgentConnection>>> {
    agent_for_inspected(engine, container, None).await
}

/// `agent_for` when `enabled`, else `None` (the engine path).
pub async fn agent_if(
    enabled: bool,
    engine: &Engine,
    container: &str,
) -> Result<Option<Arc<AgentConnection>>> {
    match enabled {
        true => agent_for(engine, container).await,
        false => Ok(None),
    }
}

/// Hands the agent started for `from` (a warm pool member, by its engine id) to `to` (the
/// name the member was renamed to): later calls for `to` use it. Nothing when there is none.
pub fn move_agent(engine: &Engine, from: &str, to: &str) {
    let endpoint = engine.endpoint().to_string();
    let mut pool = pool().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(cell) = pool.remove(&(endpoint.clone(), from.to_string())) {
        pool.insert((endpoint, to.to_string()), cell);
    }
}

/// `agent_for`, given an inspect of the container just made (saves asking again).
pub async fn agent_for_inspected(
    engine: &Engine,
    container: &str,
    inspected: Option<&ContainerInspectResponse>,
) -> Result<Option<Arc<AgentConnection>>> {
    Ok(match access(engine, container, inspected).await? {
        Slot::Ready { connection, .. } => Some(connection),
        Slot::Unavailable { .. } => None,
    })
}

/// Which path `container`'s operations take, starting its agent if needed.
pub async fn agent_access(engine: &Engine, container: &str) -> Result<AgentAccess> {
    Ok(match access(engine, container, None).await? {
        Slot::Ready { connection, .. } => AgentAccess::Agent {
            path: connection.path.clone(),
            pid: connection.pid,
            exec_why: connection.line_reason(),
        },
        Slot::Unavailable { why, .. } => AgentAccess::Engine { why },
    })
}

fn cell(engine: &Engine, container: &str) -> Cell {
    let key = (engine.endpoint().to_string(), container.to_string());
    pool()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(key)
        .or_default()
        .clone()
}

/// The container's line listener (made now if need be) and the pid of its main process
/// on this host, for an offer to another process than its agent; or why there is none.
pub(super) async fn shared_listener(
    engine: &Engine,
    container: &str,
    inspected: &ContainerInspectResponse,
) -> std::result::Result<(Arc<LineListener>, u32), String> {
    let engine_id = inspected.id.clone().unwrap_or_default();
    let cell = cell(engine, container);
    let mut state = cell.state.lock().await;
    *cell.engine_id.lock().unwrap_or_else(|e| e.into_inner()) = engine_id.clone();
    let (mounts, _) = bind_mounts_with_agent(inspected.mounts.clone());
    let offer = line_offer(engine, inspected, &engine_id, &mounts, &mut state.listener)?;
    let init_pid = offer.init_pid;
    let listener = state.listener.clone().expect("an offer has its listener");
    Ok((listener, init_pid))
}

async fn access(
    engine: &Engine,
    container: &str,
    inspected: Option<&ContainerInspectResponse>,
) -> Result<Slot> {
    if disabled() {
        return Ok(Slot::Unavailable {
            engine_id: String::new(),
            why: SWITCHED_OFF.into(),
            retry_at: None,
        });
    }
    let cell = cell(engine, container);
    let mut state = cell.state.lock().await;
    if let Some(Slot::Ready { connection, .. }) = state.slot.as_ref() {
        if !connection.is_closed() {
            return Ok(state.slot.clone().unwrap());
        }
    }
    let inspected = match inspected {
        Some(inspected) => inspected.clone(),
        None => {
            engine
                .inspect_container(container, &format!("container '{container}'"))
                .await?
        }
    };
    let engine_id = inspected.id.clone().unwrap_or_default();
    *cell.engine_id.lock().unwrap_or_else(|e| e.into_inner()) = engine_id.clone();
    if let Some(Slot::Unavailable {
        engine_id: id,
        retry_at,
        ..
    }) = state.slot.as_ref()
    {
        if *id == engine_id && retry_at.is_none_or(|at| Instant::now() < at) {
            return Ok(state.slot.clone().unwrap());
        }
    }
    let running = inspected.state.as_ref().and_then(|s| s.running) == Some(true);
    if !running {
        state.slot = None;
        return Err(crate::error::Error::new(
            ErrorCode::ContainerNotRunning,
            format!("container '{container}' is not running"),
        ));
    }
    state.count_failure();
    if let Some(why) = state.struck_out() {
        tracing::warn!("container '{container}': {why}");
        let retry_at = Some(Instant::now() + COOLDOWN);
        let slot = Slot::Unavailable {
            engine_id,
            why,
            retry_at,
        };
        state.slot = Some(slot.clone());
        return Ok(slot);
    }
    let new = start(
        engine,
        container,
        &inspected,
        engine_id,
        &mut state.listener,
    )
    .await;
    state.slot = Some(new.clone());
    Ok(new)
}

/// Closes the connection and line socket of the container known by any of `ids` on
/// `engine`, after its stop or removal through this library; the next call starts anew.
pub async fn close_container(engine: &Engine, ids: &[&str]) {
    let endpoint = engine.endpoint().to_string();
    let named = |id: &str| !id.is_empty() && ids.contains(&id);
    let cells: Vec<Cell> = {
        let mut pool = pool().lock().unwrap_or_else(|e| e.into_inner());
        let keys: Vec<Key> = pool
            .iter()
            .filter(|((at, name), cell)| {
                *at == endpoint
                    && (named(name)
                        || named(&cell.engine_id.lock().unwrap_or_else(|e| e.into_inner())))
            })
            .map(|(key, _)| key.clone())
            .collect();
        keys.iter().filter_map(|key| pool.remove(key)).collect()
    };
    for cell in cells {
        let mut state = cell.state.lock().await;
        if let Some(Slot::Ready { connection }) = state.slot.take() {
            connection.close();
        }
        state.listener = None;
    }
}

/// Starts the agent in a running container: `Ready`, or why it cannot run there.
async fn start(
    engine: &Engine,
    container: &str,
    inspected: &ContainerInspectResponse,
    engine_id: String,
    listener: &mut Option<Arc<LineListener>>,
) -> Slot {
    let (mounts, agent_mount) = bind_mounts_with_agent(inspected.mounts.clone());
    let uploaded = agent_uploaded(inspected.config.as_ref().and_then(|c| c.labels.as_ref()));
    let (started, lasting) = if agent_mount.is_some() || uploaded {
        let line = line_offer(engine, inspected, &engine_id, &mounts, listener);
        (
            AgentConnection::start(engine, container, AGENT_MOUNT, line)
                .await
                .map_err(|e| e.message),
            false,
        )
    } else if swappable_mount(&mounts).is_some() {
        (Err("the container has a swappable bind mount, so nothing is uploaded to it through the engine".into()), true)
    } else {
        (upload_and_start(engine, container, inspected).await, false)
    };
    match started {
        Ok(connection) => Slot::Ready {
            connection: Arc::new(connection),
        },
        Err(why) => {
            tracing::info!("container '{container}': no session agent: {why}");
            let retry_at = (!lasting).then(|| Instant::now() + COOLDOWN);
            Slot::Unavailable {
                engine_id,
                why,
                retry_at,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn struck(ages: &[u64]) -> Option<String> {
        let mut state = CellState::default();
        for age in ages {
            let at = Instant::now() - Duration::from_secs(*age);
            state.strikes.push_back((at, "broke the protocol".into()));
        }
        state.struck_out()
    }

    #[test]
    fn three_failures_within_a_minute_send_a_container_to_the_engine_path() {
        assert_eq!(struck(&[10, 5]), None);
        let why = struck(&[10, 5, 0]).unwrap();
        assert!(why.contains("failed 3 times within 60 s"), "{why}");
        assert!(why.contains("broke the protocol"), "{why}");
    }

    #[test]
    fn failures_older_than_a_minute_do_not_count() {
        assert_eq!(struck(&[120, 90, 0]), None);
    }
}
