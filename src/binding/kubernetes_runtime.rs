//! The `KubernetesRuntime` class (docs/contract.md §8): Lace's `ContainerRuntime` with each
//! container a Pod of a Kubernetes cluster; the methods are the shared ones of
//! `runtime_calls`.

use std::sync::Arc;
use std::time::Duration;

use napi_derive::napi;

use super::container_types::{ContainerConfig, ContainerInfo, ExecOptions, ExecResult};
use super::error::{sync_error, Code, Outcome};
use super::kubernetes_check::{KubernetesCheck, KubernetesCheckOptions};
use super::kubernetes_file_io::{KubernetesFileIO, PodFileIoOptions};
use super::progress::pull_policy;
use super::runtime_calls::{self as calls, LogsOptions};
use crate::kubernetes::{self, KubernetesRuntimeOptions as CoreOptions, PodFiles};
use crate::runtime::Direction;

/// Which cluster, namespace and runtime class sessions run in.
#[napi(object)]
#[derive(Clone)]
pub struct KubernetesOptions {
    /// A kubeconfig file; default: `KUBECONFIG`, `~/.kube/config`, then the service account
    /// of the Pod the host runs in.
    pub kubeconfig: Option<String>,
    /// A context of the kubeconfig; default: its current context.
    pub context: Option<String>,
    /// Default: the context's namespace, else `default`.
    pub namespace: Option<String>,
    /// The Pods' `runtimeClassName` (e.g. gVisor or Kata), where the cluster has one.
    pub runtime_class_name: Option<String>,
    /// Per API request (not per stream), in ms; default kube's own.
    pub timeout_ms: Option<f64>,
}

/// Options of `new KubernetesRuntime()`.
#[napi(object)]
pub struct KubernetesRuntimeOptions {
    /// The cluster; default: as kubectl finds it.
    pub kubernetes: Option<KubernetesOptions>,
    /// Image used when a container config names none.
    pub image: Option<String>,
    /// Where this library keeps state; recorded on each Pod so `list` sees only its own.
    pub base_dir: Option<String>,
    /// The Pods' `imagePullPolicy`: `'missing'` (IfNotPresent, default), `'always'`, or
    /// `'never'` (an image the node lacks rejects `IMAGE_NOT_FOUND`). A config's `pull` wins.
    #[napi(ts_type = "'missing' | 'always' | 'never'")]
    pub pull: Option<String>,
    /// Default true: run `exec` through the Pod's session agent where it can serve (a Pod
    /// running as root whose image has `/bin/sh` to receive it): a user per exec, the
    /// command's whole tree killed at its timeout. False: always the plain exec.
    pub agent: Option<bool>,
}

/// Lace's `ContainerRuntime` on a Kubernetes cluster: each container a Pod (no service
/// account token, no privilege escalation, capabilities dropped but a root session's own,
/// seccomp `RuntimeDefault`). Rejections carry stable codes: `ENGINE_UNAVAILABLE`,
/// `FORBIDDEN` (naming the permission the Role lacks), `UNSUPPORTED` (naming the option a Pod
/// cannot have), `IMAGE_NOT_FOUND`, `CONTAINER_NOT_FOUND`, `CONTAINER_NOT_RUNNING`,
/// `TIMEOUT`, `INVALID_ARGUMENT`, `ENGINE_ERROR`.
#[napi]
pub struct KubernetesRuntime {
    pub(super) inner: Arc<kubernetes::KubernetesRuntime>,
}

/// The core's cluster options from the binding's.
pub fn kubernetes_options(
    opts: Option<KubernetesOptions>,
) -> napi::Result<kubernetes::KubernetesOptions, Code> {
    let Some(o) = opts else {
        return Ok(Default::default());
    };
    let timeout = match o.timeout_ms {
        None => None,
        Some(ms) if ms.is_finite() && ms >= 1.0 => Some(Duration::from_millis(ms as u64)),
        Some(ms) => {
            return Err(sync_error(crate::error::Error::invalid_argument(format!(
                "kubernetes.timeoutMs must be a positive number of milliseconds, not {ms}"
            ))))
        }
    };
    Ok(kubernetes::KubernetesOptions {
        kubeconfig: o.kubeconfig,
        context: o.context,
        namespace: o.namespace,
        runtime_class: o.runtime_class_name,
        timeout,
    })
}

#[napi]
impl KubernetesRuntime {
    /// Connects lazily, on the first call; reaps then the Pods of host processes that died.
    #[napi(constructor)]
    pub fn new(opts: Option<KubernetesRuntimeOptions>) -> napi::Result<Self, Code> {
        let (cluster, image, base_dir, pull, agent) = match opts {
            Some(o) => (o.kubernetes, o.image, o.base_dir, o.pull, o.agent),
            None => (None, None, None, None, None),
        };
        let cluster = kubernetes_options(cluster)?;
        let pull = pull_policy(pull).map_err(sync_error)?.unwrap_or_default();
        Ok(KubernetesRuntime {
            inner: Arc::new(kubernetes::KubernetesRuntime::new(CoreOptions {
                cluster,
                image,
                base_dir,
                pull,
                agent,
            })),
        })
    }

    /// Creates the Pod, waits until its container runs, and returns its name, which every
    /// method accepts as its id.
    #[napi(ts_return_type = "Promise<string>")]
    pub async fn create(&self, config: ContainerConfig) -> Outcome<String> {
        calls::create(&*self.inner, config).await
    }

    /// A running Pod: nothing. A stopped one is made again from its own spec (Kubernetes
    /// restarts no Pod that ended): what lived only in its file system is gone.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn start(&self, container_id: String) -> Outcome<()> {
        calls::start(&*self.inner, container_id).await
    }

    /// SIGTERM to every process of the Pod, SIGKILL after `timeout` ms (default 10000); the
    /// Pod stays, stopped, until removed.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn stop(&self, container_id: String, timeout: Option<f64>) -> Outcome<()> {
        calls::stop(&*self.inner, container_id, timeout).await
    }

    /// Deletes the Pod and waits until it is gone.
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn remove(&self, container_id: String) -> Outcome<()> {
        calls::remove(&*self.inner, container_id).await
    }

    /// Magenta's `FileIO` on the Pod's file system, through its session agent (started on
    /// first use, as for `exec`); nothing is asked of the cluster until a call.
    #[napi(js_name = "fileIO")]
    pub fn file_io(
        &self,
        container_id: String,
        opts: Option<PodFileIoOptions>,
    ) -> KubernetesFileIO {
        let (user, cwd) = opts.map_or((None, None), |o| (o.user, o.cwd));
        KubernetesFileIO::from_core(PodFiles::new(self.inner.clone(), &container_id, user, cwd))
    }

    /// Runs a command in the Pod and buffers its output; a non-zero exit is a result, not a
    /// rejection. Through the Pod's session agent where it serves (`user` per exec, the
    /// whole tree killed at `timeout`), else by a plain exec, where `user` is `UNSUPPORTED`.
    #[napi(ts_return_type = "Promise<ExecResult>")]
    pub async fn exec(&self, container_id: String, options: ExecOptions) -> Outcome<ExecResult> {
        calls::exec(&*self.inner, container_id, options).await
    }

    /// The Pod's state, times, exit code, image and labels; rejects `CONTAINER_NOT_FOUND`.
    #[napi(ts_return_type = "Promise<ContainerInfo>")]
    pub async fn inspect(&self, container_id: String) -> Outcome<ContainerInfo> {
        calls::inspect(&*self.inner, container_id).await
    }

    /// Live from the cluster; `null` when the Pod does not exist.
    #[napi(ts_return_type = "Promise<ContainerInfo | null>")]
    pub async fn daemon_inspect(&self, container_id: String) -> Outcome<Option<ContainerInfo>> {
        calls::daemon_inspect(&*self.inner, container_id).await
    }

    /// Pods this library created under this runtime's base directory, in its namespace.
    #[napi(ts_return_type = "Promise<ContainerInfo[]>")]
    pub async fn list(&self) -> Outcome<Vec<ContainerInfo>> {
        calls::list(&*self.inner).await
    }

    /// Resolves with the main process's exit code once it exits.
    #[napi(ts_return_type = "Promise<number>")]
    pub async fn wait(&self, container_id: String) -> Outcome<i64> {
        calls::wait(&*self.inner, container_id).await
    }

    /// Delivers the Pod's log line by line to `onLine` (Kubernetes keeps one log: every line
    /// comes as stdout); resolves when the log ends (when the container exits, if following).
    #[napi(ts_return_type = "Promise<void>")]
    pub async fn logs(&self, container_id: String, opts: Option<LogsOptions>) -> Outcome<()> {
        calls::logs(&*self.inner, container_id, opts).await
    }

    /// Asks the cluster which API server and version answer, which permissions the library
    /// uses the credentials lack in the namespace (each a SelfSubjectAccessReview), its
    /// nodes and RuntimeClasses where the credentials may list them, and, with
    /// `networkPolicy: true`, whether it enforces NetworkPolicy (two probe Pods, measured).
    #[napi(ts_return_type = "Promise<KubernetesCheck>")]
    pub async fn check(&self, opts: Option<KubernetesCheckOptions>) -> Outcome<KubernetesCheck> {
        let probe = opts.unwrap_or_default().probe();
        Outcome(
            kubernetes::report_cluster(&self.inner, probe)
                .await
                .map(Into::into),
        )
    }

    /// Deletes the Leases of host processes that died, whose `'process'`-lifetime Pods the
    /// cluster's garbage collector then removes; resolves with how many.
    #[napi(ts_return_type = "Promise<number>")]
    pub async fn reap_orphans(&self) -> Outcome<u32> {
        Outcome(self.inner.reap_orphans().await.map(|n| n as u32))
    }

    /// A Pod has no host mounts: the path unchanged. Throws `CONTAINER_NOT_FOUND` for a Pod
    /// this runtime has not created, inspected or listed.
    #[napi]
    pub fn translate_to_container(
        &self,
        host_path: String,
        container_id: String,
    ) -> napi::Result<String, Code> {
        calls::translate(
            &*self.inner,
            host_path,
            container_id,
            Direction::ToContainer,
        )
    }

    /// A Pod has no host mounts: the path unchanged (as `translateToContainer`).
    #[napi]
    pub fn translate_to_host(
        &self,
        container_path: String,
        container_id: String,
    ) -> napi::Result<String, Code> {
        calls::translate(
            &*self.inner,
            container_path,
            container_id,
            Direction::ToHost,
        )
    }
}
