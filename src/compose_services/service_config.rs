//! One compose service as a create config: its image, command and entrypoint as compose
//! combines them with the image's, environment, user, working directory, named volumes
//! (the set's engine volumes), bind mounts and tmpfs, labels, healthcheck, the privileges
//! the trust granted it, the session's limits with the service's pids share, and the
//! session's lifetime and labels.

use super::service_binds::bind_mounts;
use super::service_spec::{ServiceSetSpec, ServiceSpec};
use super::set_names::{service_container_name, volume_name};
use crate::container_runtime::ContainerConfig;
use crate::runtime::{ContainerMount, ContainerPrivileges, MountKind};

/// `entrypoint` replaces the image's ENTRYPOINT and CMD (`command` then its arguments); an
/// empty one clears the ENTRYPOINT, leaving `command`; `command` alone replaces the CMD
/// only.
fn set_command(config: &mut ContainerConfig, service: &ServiceSpec) {
    match (&service.entrypoint, &service.command) {
        (Some(entrypoint), command) if !entrypoint.is_empty() => {
            let mut argv = entrypoint.clone();
            argv.extend(command.iter().flatten().cloned());
            config.command = Some(argv);
        }
        (Some(_), command) => config.command = command.clone(),
        (None, command) => {
            config.image_command = true;
            config.image_arguments = command.clone();
        }
    }
}

fn mounts(spec: &ServiceSetSpec, service: &ServiceSpec) -> Vec<ContainerMount> {
    let volumes = service.volumes.iter().map(|v| {
        let source = volume_name(&spec.container, &v.volume);
        let mut mount = ContainerMount::new(MountKind::Volume, &source, &v.target);
        mount.readonly = v.read_only;
        mount
    });
    let tmpfs = service
        .tmpfs
        .iter()
        .map(|target| ContainerMount::new(MountKind::Tmpfs, "", target));
    volumes
        .chain(bind_mounts(spec, service))
        .chain(tmpfs)
        .collect()
}

/// The service's privileges, a namespace mode `service:<name>` as that service's container.
fn privileges(spec: &ServiceSetSpec, service: &ServiceSpec) -> ContainerPrivileges {
    let mut privileges = service.privileges.clone();
    for mode in privileges.namespaces.values_mut() {
        if let Some(other) = mode.strip_prefix("service:") {
            *mode = format!(
                "container:{}",
                service_container_name(&spec.container, other)
            );
        }
    }
    privileges
}

/// The config of `service`'s container, working in `working_dir` (the service's, else its
/// image's), before it joins the holder.
pub fn service_config(
    spec: &ServiceSetSpec,
    service: &ServiceSpec,
    working_dir: String,
    pids: Option<i64>,
) -> ContainerConfig {
    let mut config = ContainerConfig {
        name: Some(service_container_name(&spec.container, &service.name)),
        image: Some(service.image.clone()),
        working_directory: working_dir,
        mounts: mounts(spec, service),
        environment: service.environment.clone(),
        user: service.user.clone().filter(|u| !u.is_empty()),
        labels: service.labels.clone(),
        healthcheck: service.healthcheck.clone(),
        privileges: privileges(spec, service),
        ..spec.member_config(pids)
    };
    set_command(&mut config, service);
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compose_services::service_spec::VolumeMount;

    fn argv(words: &[&str]) -> Option<Vec<String>> {
        Some(words.iter().map(|w| w.to_string()).collect())
    }

    fn config_of(service: ServiceSpec) -> ContainerConfig {
        let spec = ServiceSetSpec {
            container: "ws-s1".into(),
            session_id: "s1".into(),
            ..Default::default()
        };
        service_config(&spec, &service, "/".into(), Some(100))
    }

    #[test]
    fn command_and_entrypoint_combine_as_compose_combines_them() {
        let c = config_of(ServiceSpec {
            command: argv(&["redis-server", "--port", "1"]),
            ..Default::default()
        });
        assert!(c.image_command && c.command.is_none());
        assert_eq!(c.image_arguments, argv(&["redis-server", "--port", "1"]));
        let c = config_of(ServiceSpec {
            entrypoint: argv(&["/init"]),
            command: argv(&["run"]),
            ..Default::default()
        });
        assert_eq!(c.command, argv(&["/init", "run"]));
        let c = config_of(ServiceSpec {
            entrypoint: argv(&[]),
            command: argv(&["run"]),
            ..Default::default()
        });
        assert_eq!((c.command, c.image_command), (argv(&["run"]), false));
        let c = config_of(ServiceSpec::default());
        assert!(c.image_command && c.image_arguments.is_none());
    }

    #[test]
    fn volumes_are_the_sets_and_limits_the_sessions() {
        let c = config_of(ServiceSpec {
            name: "db".into(),
            volumes: vec![VolumeMount {
                volume: "data".into(),
                target: "/var/lib/db".into(),
                read_only: true,
            }],
            tmpfs: vec!["/run".into()],
            ..Default::default()
        });
        assert_eq!(c.name.as_deref(), Some("ws-s1-svc-db"));
        assert_eq!(c.mounts[0].source, "ws-s1-svc-data");
        assert!(c.mounts[0].readonly);
        assert_eq!(c.mounts[1].kind, MountKind::Tmpfs);
        assert_eq!(c.resources.pids, Some(100));
    }

    #[test]
    fn granted_privileges_and_binds_reach_the_config() {
        let mut privileges = ContainerPrivileges {
            cap_add: vec!["NET_ADMIN".into()],
            devices: vec!["/dev/fuse".into()],
            ..Default::default()
        };
        privileges
            .namespaces
            .insert("ipc".into(), "service:db".into());
        privileges.namespaces.insert("pid".into(), "host".into());
        let spec = ServiceSetSpec {
            container: "ws-s1".into(),
            clone_path: Some("/base/sessions/s1".into()),
            ..Default::default()
        };
        let service = ServiceSpec {
            name: "web".into(),
            binds: vec![crate::compose_services::BindMount {
                source: crate::compose_services::BindSource::Clone("sql/init.sql".into()),
                target: "/init.sql".into(),
                read_only: true,
            }],
            privileges,
            ..Default::default()
        };
        let c = service_config(&spec, &service, "/".into(), None);
        assert_eq!(c.privileges.cap_add, ["NET_ADMIN"]);
        assert_eq!(c.privileges.devices, ["/dev/fuse"]);
        assert_eq!(c.privileges.namespaces["ipc"], "container:ws-s1-svc-db");
        assert_eq!(c.privileges.namespaces["pid"], "host");
        let bind = &c.mounts[0];
        assert_eq!(
            (bind.kind, bind.source.as_str(), bind.readonly),
            (MountKind::Bind, "/base/sessions/s1/sql/init.sql", true)
        );
    }
}
