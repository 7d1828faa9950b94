//! Connecting to a Kubernetes cluster as kubectl does: a kubeconfig file (the option, else
//! `KUBECONFIG`, else `~/.kube/config`), one of its contexts, or the service account of the
//! Pod the host runs in.

use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use crate::error::{Error, ErrorCode, Result};

/// How long connecting to the API server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where sessions run on a cluster, and how they are placed there.
#[derive(Debug, Clone, Default)]
pub struct KubernetesOptions {
    /// A kubeconfig file; `None`: `KUBECONFIG`, `~/.kube/config`, then the in-cluster
    /// service account.
    pub kubeconfig: Option<String>,
    /// A context of the kubeconfig; `None`: its current context.
    pub context: Option<String>,
    /// `None`: the context's namespace, else `default`.
    pub namespace: Option<String>,
    /// The Pods' `runtimeClassName` (gVisor, Kata) where the cluster has one.
    pub runtime_class: Option<String>,
    /// Per request (not per stream); `None`: kube's own default.
    pub timeout: Option<Duration>,
}

/// A connected cluster and the namespace the library works in.
#[derive(Clone)]
pub struct Cluster {
    pub client: Client,
    pub namespace: String,
    /// The API server's URL, for messages.
    pub server: String,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cluster({}, namespace {})", self.server, self.namespace)
    }
}

/// Reads the configuration the options name and makes a client; nothing is sent yet.
pub async fn connect(options: &KubernetesOptions) -> Result<Cluster> {
    let mut config = load_config(options).await?;
    config.connect_timeout = Some(CONNECT_TIMEOUT);
    if let Some(timeout) = options.timeout {
        config.read_timeout = Some(timeout);
        config.write_timeout = Some(timeout);
    }
    if let Some(namespace) = options.namespace.as_deref().filter(|n| !n.is_empty()) {
        check_dns_label(namespace, "namespace")?;
        config.default_namespace = namespace.to_string();
    }
    let server = config.cluster_url.to_string();
    let namespace = config.default_namespace.clone();
    let client = Client::try_from(config).map_err(|err| {
        Error::new(
            ErrorCode::EngineUnavailable,
            format!("Kubernetes API server {server}: cannot make a client: {err}"),
        )
    })?;
    Ok(Cluster {
        client,
        namespace,
        server,
    })
}

async fn load_config(options: &KubernetesOptions) -> Result<Config> {
    let kube_options = KubeConfigOptions {
        context: options.context.clone().filter(|c| !c.is_empty()),
        cluster: None,
        user: None,
    };
    let unavailable = |what: String| Error::new(ErrorCode::EngineUnavailable, what);
    match options.kubeconfig.as_deref().filter(|p| !p.is_empty()) {
        Some(path) => {
            let file = Kubeconfig::read_from(path)
                .map_err(|err| unavailable(format!("kubeconfig '{path}': {err}")))?;
            Config::from_custom_kubeconfig(file, &kube_options)
                .await
                .map_err(|err| unavailable(format!("kubeconfig '{path}': {err}")))
        }
        None if kube_options.context.is_some() => Config::from_kubeconfig(&kube_options)
            .await
            .map_err(|err| unavailable(format!("kubeconfig (KUBECONFIG or ~/.kube/config): {err}"))),
        None => Config::infer().await.map_err(|err| {
            unavailable(format!(
                "no Kubernetes configuration: no kubeconfig option, KUBECONFIG, ~/.kube/config or in-cluster service account ({err})"
            ))
        }),
    }
}

/// A DNS-1123 label, as Kubernetes wants namespaces and Pod names' parts.
pub fn check_dns_label(text: &str, what: &str) -> Result<()> {
    let ok = !text.is_empty()
        && text.len() <= 63
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !text.starts_with('-')
        && !text.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "{what} '{text}' is not a DNS label (at most 63 of a-z, 0-9 and '-', not at either end)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels() {
        for good in ["a", "session-1", "x9"] {
            assert!(check_dns_label(good, "name").is_ok(), "{good}");
        }
        let long = "a".repeat(64);
        for bad in ["", "A", "-a", "a-", "a_b", "a.b", long.as_str()] {
            let err = check_dns_label(bad, "name").unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument, "{bad}");
        }
    }

    #[tokio::test]
    async fn a_missing_kubeconfig_is_engine_unavailable() {
        let options = KubernetesOptions {
            kubeconfig: Some("/nonexistent/kubeconfig".into()),
            ..Default::default()
        };
        let err = connect(&options).await.unwrap_err();
        assert_eq!(err.code, ErrorCode::EngineUnavailable);
        assert!(
            err.message.contains("/nonexistent/kubeconfig"),
            "{}",
            err.message
        );
    }
}
