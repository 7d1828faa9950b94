//! The `Workspaces` class (docs/contract.md §6): converts options and results, installs the exit
//! hooks, starts the watchdog when asked.

use std::sync::Arc;

use napi::bindgen_prelude::{Either, Undefined};
use napi::Env;
use napi_derive::napi;

use super::container_git_client::ContainerGitClient;
use super::docker_file_io::DockerFileIO;
use super::docker_shell::DockerShell;
use super::durations::duration_ms;
use super::egress::{egress_from_js, EgressOption};
use super::engine::{engine_options, ContainerAccess};
use super::environment_options::{shell_settings, EnvironmentOptions};
use super::error::{sync_error, Code, Outcome};
use super::kubernetes_file_io::KubernetesFileIO;
use super::port_forward::{ForwardPortOptions, PortForward};
use super::progress::{progress_target, pull_policy};
use super::resources::resources_from_js;
use super::terminal::{terminal_request, Terminal, TerminalOptions};
use super::trust::host_trust;
use super::warm_pool::pool_options;
use super::workspace_info::{start_ref, RepositoryOptions, WorkspaceInfo};
use super::workspace_sessions::{pod_create, pod_sessions, Sessions};
use super::workspaces_options::{CreateWorkspaceOptions, WorkspacesOptions};
use super::{exit_hooks, watchdog};
use crate::base_dir::resolve_base_dir;
use crate::egress::Egress;
use crate::error::Error;
use crate::runtime::Lifetime;
use crate::session_settings::Trust;
use crate::workspace;

/// What a host needs to run an agent thread in a session (`Workspaces.environment`).
#[napi(object, object_from_js = false)]
pub struct WorkspaceEnvironment {
    /// Files of the session's container (a `KubernetesFileIO`, with the same methods, for a
    /// session on a cluster), relative paths against `cwd`.
    #[napi(js_name = "fileIO", ts_type = "DockerFileIO | KubernetesFileIO")]
    pub file_io: Either<DockerFileIO, KubernetesFileIO>,
    /// Commands in the session's container, in `cwd`.
    pub shell: DockerShell,
    /// Git state of the session's clone, seen from inside the container.
    pub git_client: ContainerGitClient,
    /// The workspace folder in the container.
    pub cwd: String,
    /// The session user's home directory in the container.
    pub home_dir: String,
}

/// One git clone plus one container per agent session, created from the project's
/// devcontainer.json under the host's trust. State is kept on disk, so any process sees the
/// same workspaces.
#[napi]
pub struct Workspaces {
    pub(super) sessions: Sessions,
}

impl Workspaces {
    /// The engine's sessions; `UNSUPPORTED` naming `what` for sessions on a cluster.
    pub(super) fn on_engine(&self, what: &str) -> crate::error::Result<Arc<workspace::Workspaces>> {
        self.sessions.on_engine(what)
    }
}

#[napi]
impl Workspaces {
    /// Connects lazily and installs the exit hooks that remove `process`-lifetime
    /// containers. A negative `idleTimeoutMs` throws `INVALID_ARGUMENT`.
    #[napi(constructor)]
    pub fn new(env: Env, opts: Option<WorkspacesOptions>) -> napi::Result<Self, Code> {
        exit_hooks::install(&env).map_err(|e| napi::Error::new(Code("ENGINE_ERROR"), e.reason))?;
        let opts = opts.unwrap_or(WorkspacesOptions {
            base_dir: None,
            engine: None,
            image: None,
            watchdog: None,
            trust: None,
            allow_host_commands: None,
            idle_timeout_ms: None,
            agent: None,
            egress: None,
            resources: None,
            pull: None,
            on_progress: None,
            storage: None,
            pool: None,
            max_checkpoints: None,
        });
        if opts.max_checkpoints == Some(0) {
            return Err(sync_error(Error::invalid_argument(
                "maxCheckpoints must be at least 1",
            )));
        }
        if let Some(cluster) = opts.engine.as_ref().and_then(|e| e.kubernetes.clone()) {
            let pods = pod_sessions(opts, cluster)?;
            return Ok(Workspaces {
                sessions: Sessions::Pods(Arc::new(pods)),
            });
        }
        let egress = match opts.egress {
            Some(option) => egress_from_js(option).map_err(sync_error)?,
            None => Egress::default(),
        };
        let trust = host_trust(opts.trust, opts.allow_host_commands);
        let idle_timeout =
            duration_ms(opts.idle_timeout_ms, "idleTimeoutMs").map_err(sync_error)?;
        let resources = resources_from_js(opts.resources, "resources").map_err(sync_error)?;
        let engine = engine_options(opts.engine).map_err(sync_error)?;
        let pull = pull_policy(opts.pull).map_err(sync_error)?;
        let storage = match opts.storage.as_deref() {
            Some(text) => workspace::StorageChoice::parse(text).map_err(sync_error)?,
            None => workspace::StorageChoice::Auto,
        };
        let pool = pool_options(opts.pool).map_err(sync_error)?;
        if opts.watchdog.unwrap_or(false) {
            watchdog::ensure_started(&engine).map_err(sync_error)?;
        }
        Ok(Workspaces {
            sessions: Sessions::Engine(Arc::new(workspace::Workspaces::new(
                workspace::WorkspacesOptions {
                    base_dir: resolve_base_dir(opts.base_dir.as_deref()),
                    engine,
                    image: opts.image,
                    trust,
                    idle_timeout,
                    agent: opts.agent.unwrap_or(true),
                    egress,
                    resources,
                    pull: pull.unwrap_or_default(),
                    progress: progress_target(opts.on_progress),
                    storage,
                    pool,
                    max_checkpoints: opts.max_checkpoints.map(|n| n as usize),
                },
            ))),
        })
    }

    /// Clone + container for a session, in one call; idempotent per session id.
    #[napi(ts_return_type = "Promise<WorkspaceInfo>")]
    pub async fn create(&self, opts: CreateWorkspaceOptions) -> Outcome<WorkspaceInfo> {
        async move {
            match &self.sessions {
                Sessions::Engine(inner) => inner.create(engine_create(opts)?).await,
                Sessions::Pods(pods) => pods.create(pod_create(opts)?).await,
            }
            .map(WorkspaceInfo::from)
        }
        .await
        .into()
    }

    /// The session's workspace, or `undefined` when there is none.
    #[napi(ts_return_type = "Promise<WorkspaceInfo | undefined>")]
    pub async fn get(&self, session_id: String) -> Outcome<Either<WorkspaceInfo, Undefined>> {
        match &self.sessions {
            Sessions::Engine(inner) => inner.get(&session_id).await,
            Sessions::Pods(pods) => pods.get(&session_id).await,
        }
        .map(|found| match found {
            Some(info) => Either::A(info.into()),
            None => Either::B(()),
        })
        .into()
    }

    /// Every workspace recorded under this base directory.
    #[napi(ts_return_type = "Promise<WorkspaceInfo[]>")]
    pub async fn list(&self) -> Outcome<Vec<WorkspaceInfo>> {
        match &self.sessions {
            Sessions::Engine(inner) => inner.list().await,
            Sessions::Pods(pods) => pods.list().await,
        }
        .map(|all| all.into_iter().map(WorkspaceInfo::from).collect())
        .into()
    }

    /// Changes a running or stopped session's egress for the connections it makes from now
    /// on. Between `'bridge'` and the relayed kinds it cannot change (`INVALID_ARGUMENT`);
    /// on Kubernetes `'bridge'` is `UNSUPPORTED`.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn set_egress(
        &self,
        session_id: String,
        #[napi(ts_arg_type = "'none' | 'public' | 'bridge' | EgressPolicy")] egress: EgressOption,
    ) -> Outcome<()> {
        async move {
            let egress = egress_from_js(egress)?;
            match &self.sessions {
                Sessions::Engine(inner) => inner.set_egress(&session_id, egress).await,
                Sessions::Pods(pods) => pods.set_egress(&session_id, egress).await,
            }
        }
        .await
        .into()
    }

    /// Serves the session container's `containerPort` on the host (`127.0.0.1` and a free
    /// port unless told otherwise), through the session's relay: the session needs no
    /// network for it. Closed by `close()`, `stop` or `destroy`.
    #[napi(ts_return_type = "Promise<PortForward>")]
    pub async fn forward_port(
        &self,
        session_id: String,
        container_port: u32,
        opts: Option<ForwardPortOptions>,
    ) -> Outcome<PortForward> {
        async move {
            let port = |n: u32, what: &str| {
                u16::try_from(n).map_err(|_| {
                    Error::invalid_argument(format!("forwardPort: {what} {n} is not a port"))
                })
            };
            let container_port = port(container_port, "container port")?;
            let (host_port, host_ip) = match opts {
                Some(o) => (o.host_port.unwrap_or(0), o.host_ip),
                None => (0, None),
            };
            let host_port = port(host_port, "host port")?;
            let host_ip: std::net::IpAddr = match host_ip {
                Some(ip) => ip.parse().map_err(|_| {
                    Error::invalid_argument(format!(
                        "forwardPort: hostIp '{ip}' is not an IP address"
                    ))
                })?,
                None => std::net::Ipv4Addr::LOCALHOST.into(),
            };
            match &self.sessions {
                Sessions::Engine(inner) => {
                    inner
                        .forward_port(&session_id, container_port, host_ip, host_port)
                        .await
                }
                Sessions::Pods(pods) => {
                    pods.forward_port(&session_id, container_port, host_ip, host_port)
                        .await
                }
            }
            .map(PortForward::from_core)
        }
        .await
        .into()
    }

    /// Which way the session's commands and file operations take, and over which line
    /// (as `containerAccess` for its container; starts its agent if need be).
    #[napi(ts_return_type = "Promise<ContainerAccess>")]
    pub async fn container_access(&self, session_id: String) -> Outcome<ContainerAccess> {
        async {
            let inner = self.on_engine("containerAccess")?;
            let access = inner.container_access(&session_id).await?;
            let relay = inner.relay_line(&session_id).await?;
            Ok(ContainerAccess::from(access).with_relay(relay))
        }
        .await
        .into()
    }

    /// Opens a terminal in the session's container, where and as the session's commands
    /// run (docs/contract.md §9); `destroy` ends it.
    #[napi(ts_return_type = "Promise<Terminal>")]
    pub async fn terminal(&self, session_id: String, opts: TerminalOptions) -> Outcome<Terminal> {
        async move {
            let request = terminal_request(opts)?;
            let (input, output, guard) = match &self.sessions {
                Sessions::Engine(inner) => inner.terminal(&session_id, request).await?,
                Sessions::Pods(pods) => pods.terminal(&session_id, request).await?,
            };
            Ok(Terminal::new(input, output, Some(guard)))
        }
        .await
        .into()
    }

    /// Container stopped, clone kept.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn stop(&self, session_id: String) -> Outcome<()> {
        match &self.sessions {
            Sessions::Engine(inner) => inner.stop(&session_id).await,
            Sessions::Pods(pods) => pods.stop(&session_id).await,
        }
        .into()
    }

    /// Container removed, clone (with its branch) moved to trash.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn destroy(&self, session_id: String) -> Outcome<()> {
        match &self.sessions {
            Sessions::Engine(inner) => inner.destroy(&session_id).await,
            Sessions::Pods(pods) => pods.destroy(&session_id).await,
        }
        .into()
    }

    /// FileIO, Shell and git client bound to the session's container, `cwd` = its mount path.
    /// `opts` sets the shell's log folder and per-command timeout (1 ms..24 h, else
    /// `INVALID_ARGUMENT`).
    #[napi(ts_return_type = "Promise<WorkspaceEnvironment>")]
    pub async fn environment(
        &self,
        session_id: String,
        thread_id: String,
        opts: Option<EnvironmentOptions>,
    ) -> Outcome<WorkspaceEnvironment> {
        async move {
            let shell = shell_settings(opts)?;
            Ok(match &self.sessions {
                Sessions::Engine(inner) => {
                    let env = inner.environment(&session_id, &thread_id, shell).await?;
                    WorkspaceEnvironment {
                        file_io: Either::A(DockerFileIO::from_core(env.file_io)),
                        shell: DockerShell::from_core(env.shell),
                        git_client: ContainerGitClient::from_core(env.git_client),
                        cwd: env.cwd,
                        home_dir: env.home_dir,
                    }
                }
                Sessions::Pods(pods) => {
                    let env = pods.environment(&session_id, &thread_id, shell).await?;
                    WorkspaceEnvironment {
                        file_io: Either::B(KubernetesFileIO::from_core(env.files)),
                        shell: DockerShell::from_core(env.shell),
                        git_client: ContainerGitClient::from_core(env.git_client),
                        cwd: env.cwd,
                        home_dir: env.home_dir,
                    }
                }
            })
        }
        .await
        .into()
    }
}

/// `create`'s options for a session on an engine.
fn engine_create(opts: CreateWorkspaceOptions) -> Result<workspace::CreateWorkspace, Error> {
    let lifetime = match opts.lifetime.as_deref() {
        None => Lifetime::Session,
        Some(text) => Lifetime::parse(text).ok_or_else(|| {
            Error::invalid_argument(format!("lifetime '{text}' is not 'process' or 'session'"))
        })?,
    };
    let start_ref = start_ref(opts.start_ref, opts.repository.as_ref())?;
    Ok(workspace::CreateWorkspace {
        repository: opts
            .repository
            .map(RepositoryOptions::transfer)
            .transpose()?,
        project_dir: opts.project_dir.unwrap_or_default(),
        plain_folder: match opts.plain_folder.as_deref() {
            Some(text) => workspace::PlainFolder::parse(text)?,
            None => workspace::PlainFolder::default(),
        },
        session_id: opts.session_id,
        start_ref,
        image: opts.image,
        devcontainer: opts.devcontainer.unwrap_or(true),
        env: opts.env.unwrap_or_default().into_iter().collect(),
        network: opts.network,
        lifetime,
        trust: opts.trust.map(Trust::from),
        egress: opts.egress.map(egress_from_js).transpose()?,
        resources: resources_from_js(opts.resources, "resources")?,
        pull: pull_policy(opts.pull)?,
        progress: progress_target(opts.on_progress),
    })
}
