//! What a set's description must satisfy before anything is made: names the engine and a
//! hosts file accept, each once; dependencies, and namespaces joined, of services that come
//! earlier (the order is the start order); a command to run; healthchecks and paths as the
//! engine takes them, bind sources in the clone plain paths below it.

use std::collections::HashSet;
use std::path::Component;

use super::service_spec::{BindSource, Dependency, ServiceSetSpec, ServiceSpec};
use super::set_names::check_part;
use crate::error::{Error, Result};

fn invalid(message: String) -> Error {
    Error::invalid_argument(message)
}

fn check_dependencies(who: &str, deps: &[Dependency], earlier: &HashSet<&str>) -> Result<()> {
    for dep in deps {
        if !earlier.contains(dep.service.as_str()) {
            return Err(invalid(format!(
                "{who} depends on service '{}', which is not among the services started before it",
                dep.service
            )));
        }
    }
    Ok(())
}

/// Bind sources: a plain path below the clone (which the set must have), or an absolute one.
fn check_binds(who: &str, spec: &ServiceSetSpec, service: &ServiceSpec) -> Result<()> {
    for bind in &service.binds {
        let plain = match &bind.source {
            BindSource::Clone(relative) => {
                spec.clone_path.is_some()
                    && relative
                        .components()
                        .all(|c| matches!(c, Component::Normal(_)))
            }
            BindSource::Host(path) => path.is_absolute(),
        };
        if !plain || !bind.target.starts_with('/') {
            return Err(invalid(format!(
                "{who}: bind mount {:?} -> '{}' needs a plain source (below the session clone, which the set must have, or absolute) and an absolute target",
                bind.source, bind.target
            )));
        }
    }
    Ok(())
}

/// Namespace modes `service:<name>` join a service started before this one.
fn check_namespaces(who: &str, service: &ServiceSpec, earlier: &HashSet<&str>) -> Result<()> {
    for (kind, mode) in &service.privileges.namespaces {
        if let Some(other) = mode.strip_prefix("service:") {
            if !earlier.contains(other) {
                return Err(invalid(format!(
                    "{who}: {kind} namespace of service '{other}', which is not among the services started before it"
                )));
            }
        }
    }
    Ok(())
}

fn check_service(container: &str, service: &ServiceSpec) -> Result<()> {
    let who = format!("service '{}'", service.name);
    check_part(container, &service.name).map_err(|e| invalid(format!("{who}: {}", e.message)))?;
    if service.image.is_empty() {
        return Err(invalid(format!("{who}: no image")));
    }
    if service.entrypoint.as_ref().is_some_and(|e| e.is_empty())
        && service.command.as_ref().is_none_or(|c| c.is_empty())
    {
        return Err(invalid(format!(
            "{who}: an empty entrypoint needs a command to run"
        )));
    }
    if let Some(check) = &service.healthcheck {
        check.validate(&who)?;
    }
    let absolute = |p: &str| p.starts_with('/');
    let targets = service.volumes.iter().map(|v| v.target.as_str());
    if let Some(bad) = targets
        .chain(service.tmpfs.iter().map(String::as_str))
        .chain(service.working_dir.as_deref())
        .find(|p| !absolute(p))
    {
        return Err(invalid(format!(
            "{who}: '{bad}' must be an absolute container path"
        )));
    }
    for volume in &service.volumes {
        check_part(container, &volume.volume)
            .map_err(|e| invalid(format!("{who}: volume '{}': {}", volume.volume, e.message)))?;
    }
    Ok(())
}

pub fn check_spec(spec: &ServiceSetSpec) -> Result<()> {
    crate::runtime::validate_name(&spec.container)?;
    check_part(&spec.container, &spec.app_service)
        .map_err(|e| invalid(format!("service '{}': {}", spec.app_service, e.message)))?;
    if spec.holder_image.is_empty() {
        return Err(invalid("service set: no image for its holder".into()));
    }
    let mut earlier: HashSet<&str> = HashSet::new();
    for service in &spec.services {
        check_service(&spec.container, service)?;
        let who = format!("service '{}'", service.name);
        check_binds(&who, spec, service)?;
        check_namespaces(&who, service, &earlier)?;
        check_dependencies(&who, &service.depends_on, &earlier)?;
        if service.name == spec.app_service || !earlier.insert(&service.name) {
            return Err(invalid(format!(
                "service '{}' is named twice in the set",
                service.name
            )));
        }
    }
    check_dependencies(
        &format!("service '{}'", spec.app_service),
        &spec.app_depends_on,
        &earlier,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compose_services::service_spec::Condition;

    fn spec(services: Vec<ServiceSpec>) -> ServiceSetSpec {
        ServiceSetSpec {
            session_id: "s1".into(),
            container: "ws-s1".into(),
            app_service: "app".into(),
            holder_image: "img".into(),
            services,
            ..Default::default()
        }
    }

    fn service(name: &str, deps: &[&str]) -> ServiceSpec {
        ServiceSpec {
            name: name.into(),
            image: "img".into(),
            depends_on: deps
                .iter()
                .map(|d| Dependency {
                    service: d.to_string(),
                    condition: Condition::Started,
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn dependencies_must_come_first_and_names_once() {
        assert!(check_spec(&spec(vec![service("db", &[]), service("web", &["db"])])).is_ok());
        let err = check_spec(&spec(vec![service("web", &["db"]), service("db", &[])]));
        assert!(err.unwrap_err().message.contains("'db'"));
        assert!(check_spec(&spec(vec![service("db", &[]), service("db", &[])])).is_err());
        assert!(check_spec(&spec(vec![service("app", &[])])).is_err());
        let mut s = spec(vec![service("db", &[])]);
        s.app_depends_on.push(Dependency {
            service: "cache".into(),
            condition: Condition::Healthy,
        });
        assert!(check_spec(&s).is_err());
    }

    #[test]
    fn paths_names_and_commands_are_checked() {
        let mut bad = service("db", &[]);
        bad.tmpfs.push("tmp".into());
        assert!(check_spec(&spec(vec![bad])).is_err());
        let mut bad = service("db", &[]);
        bad.entrypoint = Some(vec![]);
        assert!(check_spec(&spec(vec![bad])).is_err());
        assert!(check_spec(&spec(vec![service("a b", &[])])).is_err());
    }

    #[test]
    fn binds_and_joined_namespaces_are_checked() {
        use crate::compose_services::BindMount;
        let with_bind = |source: BindSource, target: &str| {
            let mut s = service("db", &[]);
            s.binds.push(BindMount {
                source,
                target: target.into(),
                read_only: true,
            });
            s
        };
        let mut set = spec(vec![with_bind(
            BindSource::Clone("sql/init.sql".into()),
            "/i",
        )]);
        assert!(check_spec(&set).is_err(), "no clone");
        set.clone_path = Some("/base/sessions/s1".into());
        assert!(check_spec(&set).is_ok());
        for (source, target) in [
            (BindSource::Clone("../etc".into()), "/i"),
            (BindSource::Clone("/etc".into()), "/i"),
            (BindSource::Clone("sql".into()), "i"),
            (BindSource::Host("etc".into()), "/i"),
        ] {
            set.services = vec![with_bind(source, target)];
            assert!(check_spec(&set).is_err(), "{:?}", set.services[0].binds);
        }
        let mut joins = service("web", &[]);
        joins
            .privileges
            .namespaces
            .insert("ipc".into(), "service:db".into());
        assert!(check_spec(&spec(vec![service("db", &[]), joins.clone()])).is_ok());
        assert!(check_spec(&spec(vec![joins, service("db", &[])])).is_err());
    }
}
