//! The containers this library made, as the reaper and a service set's teardown see them:
//! found by our labels, each with its name, labels, session and lifetime (a warm pool
//! member's as its name says), and removed without minding one already gone.

use std::collections::HashMap;

use bollard::query_parameters::{ListContainersOptionsBuilder, RemoveContainerOptionsBuilder};

use super::pool_member::{claimed_session, is_unclaimed_member};
use super::{labels, Lifetime};
use crate::engine::Engine;
use crate::error::{ErrorCode, Result};

/// A managed container as the reaper sees it.
#[derive(Debug, Clone)]
pub struct ManagedContainer {
    pub name: String,
    pub labels: HashMap<String, String>,
}

impl ManagedContainer {
    pub fn label(&self, key: &str) -> &str {
        self.labels.get(key).map(String::as_str).unwrap_or("")
    }

    /// The session label; for a warm pool member, the session its name says claimed it
    /// (else its own name: no session has it).
    pub fn session(&self) -> &str {
        if !self.label(labels::POOL).is_empty() {
            return claimed_session(&self.name).unwrap_or(&self.name);
        }
        self.label(labels::SESSION)
    }

    /// The lifetime label; a pool member no session has claimed lives as long as the process
    /// that made it, whatever the lifetime of the sessions it was made for.
    pub fn lifetime(&self) -> Lifetime {
        if self.unclaimed_member() {
            return Lifetime::Process;
        }
        Lifetime::parse(self.label(labels::LIFETIME)).unwrap_or(Lifetime::Session)
    }

    pub fn unclaimed_member(&self) -> bool {
        is_unclaimed_member(
            &self.name,
            self.labels.get(labels::POOL).map(String::as_str),
        )
    }
}

/// Lists the containers carrying our labels and the given extra label filters.
pub async fn managed_containers(
    engine: &Engine,
    filters: &[String],
) -> Result<Vec<ManagedContainer>> {
    let mut label_filters = vec![format!("{}=true", labels::MANAGED)];
    label_filters.extend(filters.iter().cloned());
    let filter_map: HashMap<&str, Vec<String>> = HashMap::from([("label", label_filters)]);
    let options = ListContainersOptionsBuilder::default()
        .all(true)
        .filters(&filter_map)
        .build();
    let listed = engine
        .list_containers(options, "list of managed containers")
        .await?;
    Ok(listed
        .into_iter()
        .filter_map(|c| {
            let name = c
                .names?
                .into_iter()
                .next()?
                .trim_start_matches('/')
                .to_string();
            Some(ManagedContainer {
                name,
                labels: c.labels.unwrap_or_default(),
            })
        })
        .collect())
}

/// Force-removes a container; one already gone (another reaper was faster) is fine.
pub async fn remove_quietly(engine: &Engine, name: &str) -> Result<bool> {
    let options = RemoveContainerOptionsBuilder::default()
        .force(true)
        .v(true)
        .build();
    match engine
        .call(
            &format!("container '{name}'"),
            engine.docker().remove_container(name, Some(options)),
        )
        .await
    {
        Ok(()) => Ok(true),
        Err(err) if err.code == ErrorCode::ContainerNotFound => Ok(false),
        Err(err) if err.message.contains("already in progress") => Ok(false),
        Err(err) => Err(err),
    }
}
