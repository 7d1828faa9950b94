//! `KubernetesRuntime`: Lace's `ContainerRuntime` (docs/contract.md §2) on a Kubernetes
//! cluster, each container a Pod (docs/kubernetes.md says what differs from the engines).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, ListParams};
use kube::Api;
use tokio::sync::OnceCell;

use super::api_errors::from_kube;
use super::cluster_check::{check_cluster, ClusterCheck};
use super::cluster_client::{connect, Cluster, KubernetesOptions};
use super::cluster_survey::{survey_cluster, ClusterSurvey};
use super::host_lease::{create_host_lease, reap_lapsed};
use super::pod_again::made_again;
use super::pod_agent::PodAgents;
use super::pod_creation::START_LIMIT;
use super::pod_exec::{run_in_pod, run_plain};
use super::pod_info::{configured_user, info_from_pod};
use super::pod_logs::follow_logs;
use super::pod_wait::{read_pod, until_exited, until_gone, until_started};
use crate::agent::AgentConnection;
use crate::base_dir::resolve_base_dir;
use crate::container_runtime::{ContainerConfig, ContainerRuntime};
use crate::engine::PullPolicy;
use crate::error::{Error, ErrorCode, Result};
use crate::output::OutputLine;
use crate::runtime::exec::{ExecOutcome, ExecRequest};
use crate::runtime::labels::{BASE_DIR, MANAGED};
use crate::runtime::{ContainerInfo, Direction, Lifetime, LogsRequest};

/// How long `remove` waits for the Pod to go.
const REMOVE_LIMIT: Duration = Duration::from_secs(60);
/// Grace period of `stop` when the caller gives none.
const DEFAULT_STOP_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Default)]
pub struct KubernetesRuntimeOptions {
    pub cluster: KubernetesOptions,
    pub image: Option<String>,
    pub base_dir: Option<String>,
    pub pull: PullPolicy,
    /// Run `exec` through the Pod's session agent where it can serve (default true).
    pub agent: Option<bool>,
}

pub struct KubernetesRuntime {
    pub(super) options: KubernetesOptions,
    pub(super) default_image: Option<String>,
    pub(super) base_dir: PathBuf,
    pub(super) pull: PullPolicy,
    cluster: OnceCell<Cluster>,
    lease: OnceCell<OwnerReference>,
    pub(super) deny_all: OnceCell<()>,
    /// Whether `exec` goes through the Pod's agent where it can, and the agents started.
    agent: bool,
    agents: PodAgents,
    /// Pods created, inspected or listed in this process (what `translate` knows).
    known: Mutex<HashSet<String>>,
}

impl KubernetesRuntime {
    pub fn new(options: KubernetesRuntimeOptions) -> Self {
        KubernetesRuntime {
            options: options.cluster,
            default_image: options.image.filter(|s| !s.is_empty()),
            base_dir: resolve_base_dir(options.base_dir.as_deref()),
            pull: options.pull,
            cluster: OnceCell::new(),
            lease: OnceCell::new(),
            deny_all: OnceCell::new(),
            agent: options.agent.unwrap_or(true),
            agents: PodAgents::default(),
            known: Mutex::new(HashSet::new()),
        }
    }

    /// The cluster, connected on first use; lapsed host Leases of dead processes are reaped
    /// then (their Pods follow).
    pub async fn cluster(&self) -> Result<&Cluster> {
        self.cluster
            .get_or_try_init(|| async {
                let cluster = connect(&self.options).await?;
                if let Err(err) = reap_lapsed(&cluster).await {
                    if err.code != ErrorCode::Forbidden {
                        return Err(err);
                    }
                }
                Ok(cluster)
            })
            .await
    }

    pub(super) async fn pods(&self) -> Result<Api<Pod>> {
        let cluster = self.cluster().await?;
        Ok(Api::namespaced(cluster.client.clone(), &cluster.namespace))
    }

    /// The API server, its version, the namespace, and the permissions the credentials lack.
    pub async fn check(&self) -> Result<ClusterCheck> {
        check_cluster(self.cluster().await?).await
    }

    /// The cluster's nodes and RuntimeClasses, as far as the credentials may list them.
    pub async fn survey(&self) -> Result<ClusterSurvey> {
        survey_cluster(self.cluster().await?).await
    }

    /// Deletes the host Leases of processes that died (their `'process'` Pods follow);
    /// how many.
    pub async fn reap_orphans(&self) -> Result<usize> {
        reap_lapsed(self.cluster().await?).await
    }

    /// The running Pod `id` and its session agent, or why the agent does not serve it.
    pub(super) async fn running_pod(
        &self,
        id: &str,
    ) -> Result<(
        Api<Pod>,
        Pod,
        std::result::Result<Arc<AgentConnection>, String>,
    )> {
        let pods = self.pods().await?;
        let pod = read_pod(&pods, id).await?;
        if info_from_pod(&pod).state != crate::runtime::ContainerState::Running {
            self.forget_pod(id);
            return Err(Error::new(
                ErrorCode::ContainerNotRunning,
                format!("container '{id}' is not running"),
            ));
        }
        let agent = match self.agent {
            true => self
                .agents
                .for_pod(&pods, id, &configured_user(&pod))
                .await?
                .map_err(|why| format!("the session agent cannot serve it: {why}")),
            false => Err("the runtime runs no session agent".to_string()),
        };
        Ok((pods, pod, agent))
    }

    /// The Pod's agent while its connection is up, without asking the cluster.
    pub(super) fn live_agent(&self, id: &str) -> Option<Arc<AgentConnection>> {
        self.agents.live(id)
    }

    pub(super) fn remember(&self, name: &str) {
        self.known.lock().unwrap().insert(name.to_string());
    }

    pub(super) async fn placement_owner(
        &self,
        lifetime: Lifetime,
    ) -> Result<Option<OwnerReference>> {
        if lifetime != Lifetime::Process {
            return Ok(None);
        }
        let cluster = self.cluster().await?;
        let owner = self
            .lease
            .get_or_try_init(|| create_host_lease(cluster))
            .await?;
        Ok(Some(owner.clone()))
    }
}

impl ContainerRuntime for KubernetesRuntime {
    async fn create(&self, config: ContainerConfig) -> Result<String> {
        self.create_with_services(config, None).await
    }

    /// A running Pod: nothing. One whose container exited: made again from its own spec
    /// (Kubernetes restarts no Pod that ended), with a fresh file system.
    async fn start(&self, id: &str) -> Result<()> {
        let pods = self.pods().await?;
        let pod = read_pod(&pods, id).await?;
        self.remember(id);
        match info_from_pod(&pod).state {
            crate::runtime::ContainerState::Running => return Ok(()),
            crate::runtime::ContainerState::Created => {
                return until_started(&pods, id, START_LIMIT).await.map(|_| ())
            }
            _ => {}
        }
        let again = made_again(&pod);
        self.forget_pod(id);
        let _ = pods
            .delete(id, &DeleteParams::default().grace_period(0))
            .await;
        until_gone(&pods, id, REMOVE_LIMIT).await?;
        self.submit(&pods, &again, id).await
    }

    /// TERM to every process of the Pod (its init, the pause process, is left), KILL after
    /// `grace`; the Pod stays, stopped, until removed.
    async fn stop(&self, id: &str, grace: Option<Duration>) -> Result<()> {
        let pods = self.pods().await?;
        self.forget_pod(id);
        let info = info_from_pod(&read_pod(&pods, id).await?);
        if info.state != crate::runtime::ContainerState::Running {
            return Ok(());
        }
        let grace = grace.unwrap_or(DEFAULT_STOP_TIMEOUT);
        let signal = |name: &str| {
            vec![
                "/bin/sh".to_string(),
                "-c".to_string(),
                format!("kill -{name} -1"),
            ]
        };
        let _ = run_plain(&pods, id, signal("TERM")).await;
        if tokio::time::timeout(grace, until_exited(&pods, id))
            .await
            .is_ok()
        {
            return Ok(());
        }
        let _ = run_plain(&pods, id, signal("KILL")).await;
        if tokio::time::timeout(Duration::from_secs(5), until_exited(&pods, id))
            .await
            .is_ok()
        {
            return Ok(());
        }
        Err(Error::timeout(format!("container '{id}' did not stop")))
    }

    async fn remove(&self, id: &str) -> Result<()> {
        let pods = self.pods().await?;
        self.forget_pod(id);
        let subject = format!("remove Pod '{id}'");
        pods.delete(id, &DeleteParams::default().grace_period(1))
            .await
            .map_err(|err| from_kube(err, &subject, "delete pods"))?;
        if !until_gone(&pods, id, REMOVE_LIMIT).await? {
            return Err(Error::timeout(format!(
                "container '{id}' was not removed within {} s",
                REMOVE_LIMIT.as_secs()
            )));
        }
        self.known.lock().unwrap().remove(id);
        Ok(())
    }

    /// Through the Pod's agent where it serves (a user per exec, the command's whole tree
    /// killed at its timeout), else by a plain exec under `env`. The Pod is read first: a
    /// live agent's stream cut by a lost API server is noticed only by the agent's health
    /// check (up to 15 s), while the read fails at once.
    async fn exec(&self, id: &str, request: ExecRequest) -> Result<ExecOutcome> {
        let (pods, _, agent) = self.running_pod(id).await?;
        match agent {
            Ok(agent) => crate::agent::run_buffered(&agent, request).await,
            Err(why) => run_in_pod(&pods, id, &request, &why).await,
        }
    }

    async fn inspect(&self, id: &str) -> Result<ContainerInfo> {
        let pods = self.pods().await?;
        let info = info_from_pod(&read_pod(&pods, id).await?);
        self.remember(id);
        Ok(info)
    }

    async fn list(&self) -> Result<Vec<ContainerInfo>> {
        let pods = self.pods().await?;
        let params = ListParams::default().labels(&format!("{MANAGED}=true"));
        let list = pods
            .list(&params)
            .await
            .map_err(|err| from_kube(err, "list Pods", "list pods"))?;
        let base_dir = self.base_dir.to_string_lossy();
        let infos: Vec<ContainerInfo> = list
            .items
            .iter()
            .map(info_from_pod)
            .filter(|info| info.labels.get(BASE_DIR).map(String::as_str) == Some(&*base_dir))
            .collect();
        for info in &infos {
            self.remember(&info.id);
        }
        Ok(infos)
    }

    async fn wait(&self, id: &str) -> Result<i64> {
        until_exited(&self.pods().await?, id).await
    }

    /// The Pod's log as lines (Kubernetes keeps one log for both streams: every line is
    /// reported as stdout).
    async fn logs(
        &self,
        id: &str,
        request: LogsRequest,
        on_line: impl FnMut(OutputLine) + Send,
    ) -> Result<()> {
        follow_logs(&self.pods().await?, id, request, on_line).await
    }

    /// A Pod has no mounts from the host: every path stays as it is.
    fn translate(&self, path: &str, id: &str, _direction: Direction) -> Result<String> {
        if !self.known.lock().unwrap().contains(id) {
            return Err(Error::new(
                ErrorCode::ContainerNotFound,
                format!("container '{id}' is not known to this runtime (create, inspect or list it first)"),
            ));
        }
        Ok(path.to_string())
    }
}

#[path = "runtime_relays.rs"]
mod relays;
