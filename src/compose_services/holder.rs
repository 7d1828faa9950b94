//! The set's holder: a container with network mode `none` whose network namespace (only
//! `lo`) the services and the session container join, and whose hosts file maps every
//! service name and the session's own service to 127.0.0.1. It runs the session's image,
//! kept alive as a session container is (our keep-alive, or the image's own command when it
//! has no shell), so it exists offline wherever the session can be made.
//!
//! The engines refuse extra host entries on a container that joins another's network, so
//! the names live on the holder. dockerd gives a joining container the holder's hosts file
//! itself; Podman (4.3) writes a new one for it, without them, so there the holder's file
//! (its `HostsPath`, a path on the engine's machine) is bind-mounted read-only over it.

use super::service_spec::ServiceSetSpec;
use super::set_names::holder_name;
use crate::container_runtime::{ContainerConfig, SetMembership};
use crate::engine::{Engine, EngineKind};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::ContainerMount;

pub const HOSTS_FILE: &str = "/etc/hosts";

/// The holder's create config: no network, the names, the smallest pids share.
pub fn holder_config(spec: &ServiceSetSpec, pids: Option<i64>) -> ContainerConfig {
    let holder = holder_name(&spec.container);
    let names = spec.services.iter().map(|s| s.name.as_str());
    let extra_hosts = std::iter::once(spec.app_service.as_str())
        .chain(names)
        .map(|name| format!("{name}:127.0.0.1"))
        .collect();
    ContainerConfig {
        name: Some(holder.clone()),
        image: Some(spec.holder_image.clone()),
        working_directory: "/".into(),
        network: Some("none".into()),
        extra_hosts,
        service_set: Some(SetMembership {
            holder,
            service: None,
        }),
        ..spec.member_config(pids)
    }
}

/// How a container joins a holder on this engine: the holder's network namespace, and on
/// Podman its hosts file (`None` on dockerd, which shares it by itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Joining {
    pub holder: String,
    pub hosts_file: Option<String>,
}

impl Joining {
    /// Learns what joining `holder` takes on `engine`; the holder must have been started
    /// (Podman writes its hosts file then).
    pub async fn of(engine: &Engine, holder: &str) -> Result<Joining> {
        if engine.info().kind != EngineKind::Podman {
            return Ok(Joining {
                holder: holder.to_string(),
                hosts_file: None,
            });
        }
        let subject = format!("service holder '{holder}'");
        let inspected = engine.inspect_container(holder, &subject).await?;
        let path = inspected
            .hosts_path
            .filter(|p| p.starts_with('/'))
            .ok_or_else(|| {
                Error::new(
                    ErrorCode::EngineError,
                    format!("{subject}: the engine reports no hosts file to share"),
                )
            })?;
        Ok(Joining {
            holder: holder.to_string(),
            hosts_file: Some(path),
        })
    }

    /// Makes `config` a member of the set: in the holder's network namespace, with its
    /// names, labelled with the set (and `service`, the compose service it runs).
    pub fn apply(&self, config: &mut ContainerConfig, service: &str) {
        config.network = Some(format!("container:{}", self.holder));
        config.extra_hosts.clear();
        config.hostname = None;
        config.mounts.retain(|m| m.target != HOSTS_FILE);
        if let Some(path) = &self.hosts_file {
            config
                .mounts
                .push(ContainerMount::bind(path, HOSTS_FILE, true));
        }
        config.service_set = Some(SetMembership {
            holder: self.holder.clone(),
            service: Some(service.to_string()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compose_services::service_spec::ServiceSpec;

    #[test]
    fn the_holder_has_no_network_and_every_name() {
        let spec = ServiceSetSpec {
            session_id: "s1".into(),
            container: "ws-s1".into(),
            app_service: "app".into(),
            holder_image: "img".into(),
            services: vec![ServiceSpec {
                name: "db".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let config = holder_config(&spec, Some(8));
        assert_eq!(config.network.as_deref(), Some("none"));
        assert_eq!(config.extra_hosts, ["app:127.0.0.1", "db:127.0.0.1"]);
        assert_eq!(config.resources.pids, Some(8));
        assert_eq!(config.service_set.unwrap().holder, "ws-s1-svc");
    }

    #[test]
    fn joining_takes_the_namespace_and_on_podman_the_hosts_file() {
        let mut config = ContainerConfig {
            hostname: Some("h".into()),
            extra_hosts: vec!["x:1.2.3.4".into()],
            ..Default::default()
        };
        let joining = Joining {
            holder: "ws-s1-svc".into(),
            hosts_file: Some("/run/x/hosts".into()),
        };
        joining.apply(&mut config, "app");
        assert_eq!(config.network.as_deref(), Some("container:ws-s1-svc"));
        assert!(config.extra_hosts.is_empty() && config.hostname.is_none());
        assert_eq!(config.mounts[0].target, HOSTS_FILE);
        assert!(config.mounts[0].readonly);
        assert_eq!(config.service_set.unwrap().service.as_deref(), Some("app"));
    }
}
