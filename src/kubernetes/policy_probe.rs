//! Whether the cluster enforces the deny-all NetworkPolicy of `network: 'none'` Pods,
//! measured rather than assumed: a policy object is accepted by every API server, but only a
//! network plugin that implements policies applies it. Two short-lived Pods of the runtime's
//! image try to open a TCP connection to the API server's Service (the address every Pod is
//! given in `KUBERNETES_SERVICE_HOST`): one under the policy, one beside it as the control.
//! Only when the control connects does the probed Pod's failure say anything.

use std::collections::BTreeMap;

use super::kubernetes_runtime::KubernetesRuntime;
use crate::container_runtime::{ContainerConfig, ContainerRuntime};
use crate::error::Result;
use crate::runtime::Lifetime;

/// The label that marks the probe's Pods (`policy` under the policy, `control` beside it).
pub const PROBE_LABEL: &str = "dev.container-isolation.probe";

/// Exits 0 when a connection to the API server's Service opened, 1 when it did not within
/// 3 s, 2 when the image has neither bash's `/dev/tcp` nor `nc`, 3 when the Pod was given no
/// Service address. Nothing of the caller's is in it.
const CONNECT_SCRIPT: &str = r#"host=$KUBERNETES_SERVICE_HOST port=${KUBERNETES_SERVICE_PORT:-443}
[ -n "$host" ] || exit 3
if [ -x /bin/bash ] && command -v timeout >/dev/null 2>&1; then
  timeout 3 /bin/bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$host" "$port" 2>/dev/null && exit 0
  exit 1
fi
if command -v nc >/dev/null 2>&1; then
  nc -z -w 3 "$host" "$port" 2>/dev/null && exit 0
  exit 1
fi
exit 2"#;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyVerdict {
    /// The control connected and the Pod under the policy did not.
    Enforced,
    /// Both connected: the policy object exists and nothing applies it.
    NotEnforced,
    /// The control could not connect either (or the image cannot try): nothing to measure
    /// against.
    Unknown,
}

impl PolicyVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyVerdict::Enforced => "enforced",
            PolicyVerdict::NotEnforced => "not-enforced",
            PolicyVerdict::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyProbe {
    pub verdict: PolicyVerdict,
    /// What was measured, in words.
    pub detail: String,
}

/// Runs both Pods of `image` (the runtime's default image when `None`) side by side and
/// removes them, whatever they answered.
pub async fn probe_network_policy(
    runtime: &KubernetesRuntime,
    image: Option<String>,
) -> Result<PolicyProbe> {
    let (policy, control) = tokio::join!(
        connect_from_pod(runtime, image.clone(), true),
        connect_from_pod(runtime, image, false)
    );
    Ok(verdict(policy?, control?))
}

/// The exit code of `CONNECT_SCRIPT` in a Pod, under the policy or not.
async fn connect_from_pod(
    runtime: &KubernetesRuntime,
    image: Option<String>,
    under_policy: bool,
) -> Result<i64> {
    let role = if under_policy { "policy" } else { "control" };
    let config = ContainerConfig {
        name: Some(format!(
            "container-isolation-probe-{role}-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        )),
        image,
        working_directory: "/".to_string(),
        command: Some(vec![
            "/bin/sh".to_string(),
            "-c".to_string(),
            CONNECT_SCRIPT.to_string(),
        ]),
        labels: BTreeMap::from([(PROBE_LABEL.to_string(), role.to_string())]),
        network: under_policy.then(|| "none".to_string()),
        lifetime: Lifetime::Process,
        ..Default::default()
    };
    let name = runtime.create(config).await?;
    let code = runtime.wait(&name).await;
    let removed = runtime.remove(&name).await;
    let code = code?;
    removed?;
    Ok(code)
}

fn verdict(policy: i64, control: i64) -> PolicyProbe {
    if let Some(code) = [control, policy].into_iter().find(|c| !(0..=3).contains(c)) {
        return PolicyProbe {
            verdict: PolicyVerdict::Unknown,
            detail: format!("the probe could not run in the image (/bin/sh exited {code}): probe with an image that has a shell"),
        };
    }
    let (verdict, detail) = match (control, policy) {
        (2, _) | (_, 2) => (
            PolicyVerdict::Unknown,
            "the image has neither bash with timeout nor nc to open a connection with: probe with an image that has".to_string(),
        ),
        (3, _) | (_, 3) => (
            PolicyVerdict::Unknown,
            "the Pods were given no API server Service address (KUBERNETES_SERVICE_HOST)".to_string(),
        ),
        (0, 0) => (
            PolicyVerdict::NotEnforced,
            "a Pod under the deny-all policy opened a connection to the API server's Service, as one beside it did: the network plugin does not apply NetworkPolicy".to_string(),
        ),
        (0, _) => (
            PolicyVerdict::Enforced,
            "a Pod beside the policy reached the API server's Service and the one under the deny-all policy did not".to_string(),
        ),
        _ => (
            PolicyVerdict::Unknown,
            "a Pod without the policy could not reach the API server's Service either: the Pods' network reaches nothing to measure against".to_string(),
        ),
    };
    PolicyProbe { verdict, detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_control_that_connects_gives_a_verdict() {
        assert_eq!(verdict(1, 0).verdict, PolicyVerdict::Enforced);
        assert_eq!(verdict(0, 0).verdict, PolicyVerdict::NotEnforced);
        assert_eq!(verdict(1, 1).verdict, PolicyVerdict::Unknown);
        assert_eq!(verdict(0, 1).verdict, PolicyVerdict::Unknown);
        assert_eq!(verdict(2, 0).verdict, PolicyVerdict::Unknown);
        assert_eq!(verdict(1, 3).verdict, PolicyVerdict::Unknown);
        assert!(verdict(128, 128).detail.contains("could not run"));
    }
}
