//! One Lease per host process and namespace: the Pods of the process's `'process'` sessions
//! name it as their owner, so that Kubernetes' garbage collector removes them once the
//! Lease is gone. The process renews it while it lives; a Lease that has lapsed (its
//! process died without deleting it) is deleted by `reap_lapsed`, which every runtime runs
//! when it first connects and on `reapOrphans`.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference};
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::Api;

use super::api_errors::from_kube;
use super::cluster_client::Cluster;
use crate::error::Result;
use crate::runtime::labels::{KIND, MANAGED};

/// How long a Lease stands without renewal.
const LEASE_SECONDS: i32 = 30;
/// How often the living process renews it.
const RENEW_EVERY: Duration = Duration::from_secs(10);
/// What a lapse must exceed before `reap_lapsed` deletes the Lease: clocks' drift.
const DRIFT_SECONDS: i64 = 10;
/// Our `kind` label on host Leases.
const HOST_LEASE_KIND: &str = "host-lease";

/// Creates this process's Lease and starts renewing it; the owner reference for its Pods.
pub async fn create_host_lease(cluster: &Cluster) -> Result<OwnerReference> {
    let leases: Api<Lease> = Api::namespaced(cluster.client.clone(), &cluster.namespace);
    let random = uuid::Uuid::new_v4().simple().to_string();
    let name = format!("container-isolation-host-{}", &random[..12]);
    let holder = format!(
        "{} pid {}",
        crate::runtime::OwnerIdentity::current().host,
        std::process::id()
    );
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            labels: Some(BTreeMap::from([
                (MANAGED.to_string(), "true".to_string()),
                (KIND.to_string(), HOST_LEASE_KIND.to_string()),
            ])),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder),
            lease_duration_seconds: Some(LEASE_SECONDS),
            acquire_time: Some(MicroTime(Timestamp::now())),
            renew_time: Some(MicroTime(Timestamp::now())),
            ..Default::default()
        }),
    };
    let subject = format!("create Lease '{name}' in namespace '{}'", cluster.namespace);
    let made = leases
        .create(&PostParams::default(), &lease)
        .await
        .map_err(|err| from_kube(err, &subject, "create leases"))?;
    tokio::spawn(renew(leases, name.clone()));
    Ok(OwnerReference {
        api_version: "coordination.k8s.io/v1".to_string(),
        kind: "Lease".to_string(),
        name,
        uid: made.metadata.uid.unwrap_or_default(),
        block_owner_deletion: None,
        controller: None,
    })
}

/// Renews until the Lease is gone (deleted by someone else: then this process's Pods are
/// gone too, and renewing would not bring them back).
async fn renew(leases: Api<Lease>, name: String) {
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        let patch = serde_json::json!({ "spec": { "renewTime": MicroTime(Timestamp::now()) } });
        match leases
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => return,
            Err(err) => tracing::warn!("renewing Lease {name}: {err}"),
        }
    }
}

/// Deletes our host Leases that lapsed (not renewed for their duration and a clock's
/// drift); returns how many. Their Pods follow through the garbage collector.
pub async fn reap_lapsed(cluster: &Cluster) -> Result<usize> {
    let leases: Api<Lease> = Api::namespaced(cluster.client.clone(), &cluster.namespace);
    let selector = format!("{MANAGED}=true,{KIND}={HOST_LEASE_KIND}");
    let subject = format!("list Leases in namespace '{}'", cluster.namespace);
    let list = leases
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|err| from_kube(err, &subject, "list leases"))?;
    let now = Timestamp::now().as_second();
    let mut reaped = 0;
    for lease in list.items {
        let Some(name) = lease.metadata.name.clone() else {
            continue;
        };
        let spec = lease.spec.unwrap_or_default();
        let renewed = spec.renew_time.map(|t| t.0.as_second()).unwrap_or(0);
        let duration = i64::from(spec.lease_duration_seconds.unwrap_or(LEASE_SECONDS));
        if now - renewed <= duration + DRIFT_SECONDS {
            continue;
        }
        let params = DeleteParams::background();
        match leases.delete(&name, &params).await {
            Ok(_) => reaped += 1,
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(err) => {
                let subject = format!("delete Lease '{name}'");
                return Err(from_kube(err, &subject, "delete leases"));
            }
        }
    }
    Ok(reaped)
}
