//! What `DockerFileIO` learns about its container from one inspect: its working directory,
//! whether it runs, its user's ids, and whether its root is reachable from this process.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::account_files::AccountFiles;
use super::container_root::ContainerRoot;
use super::host_files::HostFiles;
use crate::agent::{agent_for_inspected, resolve_user, AgentConnection, Creds, UserIds};
use crate::container_archive::EngineFiles;
use crate::engine::Engine;
use crate::error::Result;
use crate::runtime::{bind_mounts, path_exists, swappable_mount};

/// How long an inspect is trusted. A container whose root was reachable is checked at
/// every call (its main process must still run), so a stopped or recreated one is noticed
/// at once; otherwise within this time, and at once on any engine error.
const FACTS_TTL: Duration = Duration::from_secs(2);

#[derive(Clone)]
pub struct ContainerFacts {
    fetched: Instant,
    pub engine_id: String,
    pub working_dir: String,
    pub running: bool,
    /// The container's file system from the host, when the engine shares this kernel.
    pub host: Option<HostFiles>,
    /// Host writes give the right owner: ids mean the same here and in the container, and
    /// this process may give files the user's ownership.
    pub host_writes: bool,
    pub user: UserIds,
    pub has_shell: bool,
    /// The container's session agent, where it runs.
    pub agent: Option<Arc<AgentConnection>>,
    /// Why the engine's archive endpoints must not be used for this container, if so.
    pub engine_unsafe: Option<String>,
}

/// What the caller asked for: the user to act as (else the container's), and whether the
/// host may answer at all.
pub struct FactsRequest<'a> {
    pub container: &'a str,
    pub user: Option<&'a str>,
    pub host_access: bool,
    pub agent: bool,
}

impl ContainerFacts {
    pub fn fresh(&self) -> bool {
        self.fetched.elapsed() < FACTS_TTL
            && self.host.as_ref().is_none_or(|h| h.root.alive())
            && self.agent.as_ref().is_none_or(|a| !a.is_closed())
    }

    /// Inspects the container; `previous` facts of the same container keep their user and
    /// shell (which do not change while it exists).
    pub async fn inspect(
        engine: &Engine,
        request: &FactsRequest<'_>,
        previous: Option<ContainerFacts>,
    ) -> Result<ContainerFacts> {
        let container = request.container;
        let inspected = engine
            .inspect_container(container, &format!("container '{container}'"))
            .await?;
        let engine_id = inspected.id.clone().unwrap_or_default();
        let previous = previous.filter(|f| f.engine_id == engine_id);
        let engine_unsafe = swappable_mount(&bind_mounts(inspected.mounts.clone()));
        let agent =
            match inspected.state.as_ref().and_then(|s| s.running) == Some(true) && request.agent {
                true => agent_for_inspected(engine, container, Some(&inspected))
                    .await
                    .ok()
                    .flatten(),
                false => None,
            };
        let config = inspected.config.unwrap_or_default();
        let state = inspected.state.unwrap_or_default();
        let running = state.running.unwrap_or(false);
        let pid = state
            .pid
            .filter(|_| running && request.host_access && engine.is_local())
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(0);
        let host = ContainerRoot::open(pid, &engine_id).map(|root| HostFiles {
            root,
            container: container.to_string(),
        });
        let (user, has_shell) = match previous {
            Some(p) => (p.user, p.has_shell),
            None => {
                let engine_files = EngineFiles { engine, container };
                let accounts = AccountFiles {
                    container,
                    host: host.as_ref(),
                    agent: agent.as_ref(),
                    engine: engine_unsafe.is_none().then_some(engine_files),
                };
                let spec = request
                    .user
                    .map(str::to_string)
                    .or(config.user)
                    .unwrap_or_default();
                let user = resolve_user(&accounts, &spec).await?;
                let has_shell = match engine_unsafe {
                    None => path_exists(engine, container, "/bin/sh").await?,
                    Some(_) => false,
                };
                (user, has_shell)
            }
        };
        let host_writes = host.as_ref().is_some_and(|h| h.root.same_ids) && can_own(&user);
        Ok(ContainerFacts {
            fetched: Instant::now(),
            engine_id,
            working_dir: config
                .working_dir
                .filter(|w| w.starts_with('/'))
                .unwrap_or_else(|| "/".into()),
            running,
            host,
            host_writes,
            user,
            has_shell,
            agent,
            engine_unsafe,
        })
    }
}

impl ContainerFacts {
    /// Who the agent acts as.
    pub fn creds(&self) -> Creds {
        self.user.creds()
    }

    /// Whether the host may answer for this user: root (whom the kernel lets do what we
    /// would do), or anyone when no agent runs to check permissions as them.
    pub fn host_answers(&self) -> bool {
        self.user.uid == 0 || self.agent.is_none()
    }
}

/// Whether this process can give a host file the container user's ownership.
fn can_own(user: &UserIds) -> bool {
    // SAFETY: geteuid/getegid have no preconditions.
    let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
    euid == 0 || (euid == user.uid && egid == user.gid)
}
