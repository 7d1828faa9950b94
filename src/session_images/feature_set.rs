//! A session's features resolved for the build: each one's files (local ones re-checked
//! against the project, OCI ones fetched), the features they depend on fetched
//! transitively, duplicates merged, and the whole put in install order.

use std::collections::BTreeMap;
use std::path::Path;

use super::feature_fetch::fetch_feature;
use super::feature_source::{read_local, FeatureContent};
use crate::devcontainer::{
    install_order, option_env_name, parse_oci_ref, FeatureRequest, FeatureSource, OrderNode,
};
use crate::error::{Error, ErrorCode, Result};
use crate::session_settings::{checked_local_dir, registry_allowed};

/// The most features one session may install, dependencies included.
const FEATURE_COUNT_LIMIT: usize = 64;
/// The most all of a session's features may weigh together (they are held in memory).
const TOTAL_SIZE_LIMIT: usize = 128 << 20;

pub struct ResolvedFeature {
    pub request: FeatureRequest,
    pub content: FeatureContent,
}

impl ResolvedFeature {
    /// The options install.sh sees: the feature's defaults, then the config's values, by
    /// their environment names.
    pub fn option_env(&self) -> BTreeMap<String, String> {
        let defaults = self.content.metadata.option_defaults.iter();
        defaults
            .chain(self.request.options.iter())
            .map(|(id, v)| (option_env_name(id), v.as_env()))
            .collect()
    }

    fn identity(&self) -> String {
        identity(&self.request)
    }
}

fn identity(request: &FeatureRequest) -> String {
    let source = match &request.source {
        FeatureSource::Local { path } => path.to_string_lossy().into_owned(),
        FeatureSource::Oci(oci) => oci.to_string(),
        FeatureSource::Unsupported { .. } => request.reference.clone(),
    };
    let options = serde_json::to_string(&request.options).unwrap_or_default();
    format!("{source} {options}")
}

/// A name as `installsAfter` and `overrideFeatureInstallOrder` write it, without version.
fn normalized(name: &str) -> String {
    parse_oci_ref(name).map_or_else(|| name.to_string(), |oci| oci.resource())
}

fn names(feature: &ResolvedFeature) -> Vec<String> {
    match &feature.request.source {
        FeatureSource::Oci(oci) => vec![oci.resource()],
        FeatureSource::Local { .. } | FeatureSource::Unsupported { .. } => vec![
            feature.request.reference.clone(),
            feature.content.metadata.id.clone(),
        ],
    }
}

fn refused(why: String) -> Error {
    Error::new(ErrorCode::Devcontainer, why)
}

async fn content(project: &Path, request: &FeatureRequest) -> Result<FeatureContent> {
    match &request.source {
        FeatureSource::Local { path } => {
            let dir = checked_local_dir(project, path, &request.reference)?;
            let reference = request.reference.clone();
            tokio::task::spawn_blocking(move || read_local(&dir, &reference))
                .await
                .map_err(|e| refused(format!("feature {}: {e}", request.reference)))?
        }
        FeatureSource::Oci(oci) => fetch_feature(oci).await,
        FeatureSource::Unsupported { why } => Err(refused(format!("features: {why}"))),
    }
}

/// What a feature `dependsOn`, each an OCI feature from a trusted registry.
fn dependencies(
    request: &FeatureRequest,
    content: &FeatureContent,
    registries: &[String],
) -> Result<Vec<FeatureRequest>> {
    let mut found = Vec::new();
    for (reference, options) in &content.metadata.depends_on {
        let oci = parse_oci_ref(reference).ok_or_else(|| {
            refused(format!(
                "feature {}: dependsOn '{reference}' is not an OCI reference <registry>/<namespace>/<id>[:tag|@sha256:…]",
                request.reference
            ))
        })?;
        if !registry_allowed(registries, &oci.registry) {
            return Err(refused(format!(
                "feature {}: dependsOn {reference}: the host would fetch it from the registry {}; allow with trust.featureRegistries: [{:?}]",
                request.reference, oci.registry, oci.registry
            )));
        }
        found.push(FeatureRequest {
            reference: reference.clone(),
            source: FeatureSource::Oci(oci),
            options: options.clone(),
        });
    }
    Ok(found)
}

/// Every feature of `requests` and what they depend on, in install order.
pub async fn resolve_features(
    project: &Path,
    requests: &[FeatureRequest],
    overrides: &[String],
    registries: &[String],
) -> Result<Vec<ResolvedFeature>> {
    let mut features: Vec<ResolvedFeature> = Vec::new();
    let mut edges: Vec<Vec<usize>> = Vec::new();
    let mut total = 0;
    let mut queue: Vec<(FeatureRequest, Option<usize>)> =
        requests.iter().cloned().map(|r| (r, None)).collect();
    queue.reverse();
    while let Some((request, dependent)) = queue.pop() {
        let index = match features
            .iter()
            .position(|f| f.identity() == identity(&request))
        {
            Some(existing) => existing,
            None => {
                if features.len() == FEATURE_COUNT_LIMIT {
                    return Err(refused(format!(
                        "more than {FEATURE_COUNT_LIMIT} features (dependencies included)"
                    )));
                }
                let content = content(project, &request).await?;
                total += content.tar.len();
                if total > TOTAL_SIZE_LIMIT {
                    return Err(refused(format!(
                        "features larger than {TOTAL_SIZE_LIMIT} bytes together"
                    )));
                }
                for dependency in dependencies(&request, &content, registries)?
                    .into_iter()
                    .rev()
                {
                    queue.push((dependency, Some(features.len())));
                }
                features.push(ResolvedFeature { request, content });
                edges.push(Vec::new());
                features.len() - 1
            }
        };
        if let Some(dependent) = dependent {
            edges[dependent].push(index);
        }
    }
    let nodes: Vec<OrderNode> = features
        .iter()
        .zip(edges)
        .map(|(f, depends_on)| OrderNode {
            key: f.identity(),
            names: names(f),
            depends_on,
            installs_after: f
                .content
                .metadata
                .installs_after
                .iter()
                .map(|n| normalized(n))
                .collect(),
        })
        .collect();
    let overrides: Vec<String> = overrides.iter().map(|n| normalized(n)).collect();
    let order = install_order(&nodes, &overrides).map_err(|stuck| {
        refused(format!(
            "features depend on each other in a cycle: {}",
            stuck.join(", ")
        ))
    })?;
    let mut slots: Vec<Option<ResolvedFeature>> = features.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| slots[i].take()).collect())
}
