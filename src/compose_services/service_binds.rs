//! A service's bind mounts on the host. A path of the session clone is walked from the
//! clone's root without following a symlink (what is missing made) before every start of
//! the set: the engine resolves a bind source again at each start, and the session's agent
//! can change its clone in between. A host path the trust allowed must still resolve to
//! itself. These are the checks the session container's own mounts get
//! (`SessionSettings::verify_mounts`).

use std::path::{Path, PathBuf};

use super::service_spec::{BindMount, BindSource, ServiceSetSpec, ServiceSpec};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::ContainerMount;
use crate::session_settings::verify_in_clone;

/// The host path `bind` mounts (the clone's path joined; the walk is `verify_binds`).
fn host_source(spec: &ServiceSetSpec, bind: &BindMount) -> PathBuf {
    match &bind.source {
        BindSource::Clone(relative) => {
            Path::new(spec.clone_path.as_deref().unwrap_or_default()).join(relative)
        }
        BindSource::Host(path) => path.clone(),
    }
}

/// The engine mounts of `service`'s binds.
pub fn bind_mounts(spec: &ServiceSetSpec, service: &ServiceSpec) -> Vec<ContainerMount> {
    service
        .binds
        .iter()
        .map(|bind| {
            let source = host_source(spec, bind).to_string_lossy().into_owned();
            ContainerMount::bind(&source, &bind.target, bind.read_only)
        })
        .collect()
}

fn verify(spec: &ServiceSetSpec, bind: &BindMount) -> std::io::Result<()> {
    match &bind.source {
        BindSource::Clone(relative) => {
            let clone = spec.clone_path.as_deref().ok_or_else(|| {
                std::io::Error::other("the set has no session clone to mount from")
            })?;
            verify_in_clone(Path::new(clone), relative)
        }
        BindSource::Host(path) => match std::fs::canonicalize(path) {
            Ok(now) if &now == path => Ok(()),
            Ok(now) => Err(std::io::Error::other(format!(
                "it now resolves to {}",
                now.display()
            ))),
            Err(e) => Err(e),
        },
    }
}

/// Checks every bind source of the set's services; `DEVCONTAINER` naming the first that is
/// not what it must be.
pub fn verify_binds(spec: &ServiceSetSpec) -> Result<()> {
    for service in &spec.services {
        for bind in &service.binds {
            verify(spec, bind).map_err(|e| {
                Error::new(
                    ErrorCode::Devcontainer,
                    format!(
                        "service '{}': mount {} -> {} refused: {e}",
                        service.name,
                        host_source(spec, bind).display(),
                        bind.target
                    ),
                )
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec_with(clone: &Path, binds: Vec<BindMount>) -> ServiceSetSpec {
        ServiceSetSpec {
            clone_path: Some(clone.to_string_lossy().into_owned()),
            services: vec![ServiceSpec {
                name: "db".into(),
                binds,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn bind(source: BindSource) -> BindMount {
        BindMount {
            source,
            target: "/init.sql".into(),
            read_only: true,
        }
    }

    #[test]
    fn clone_sources_are_the_clones_and_symlinks_in_it_are_refused() {
        let clone = std::env::temp_dir().join(format!("ci-sb-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&clone).unwrap();
        std::fs::write(clone.join("init.sql"), "x").unwrap();
        let good = spec_with(&clone, vec![bind(BindSource::Clone("init.sql".into()))]);
        verify_binds(&good).unwrap();
        let mounts = bind_mounts(&good, &good.services[0]);
        assert_eq!(mounts[0].source, clone.join("init.sql").to_string_lossy());
        assert!(mounts[0].readonly);
        std::os::unix::fs::symlink("/etc/hostname", clone.join("link.sql")).unwrap();
        let bad = spec_with(&clone, vec![bind(BindSource::Clone("link.sql".into()))]);
        let err = verify_binds(&bad).unwrap_err();
        assert_eq!(err.code, ErrorCode::Devcontainer);
        assert!(err.message.contains("service 'db'"), "{}", err.message);
        std::fs::remove_dir_all(&clone).unwrap();
    }

    #[test]
    fn host_sources_must_resolve_to_themselves() {
        let clone = std::env::temp_dir();
        let canonical = std::fs::canonicalize("/etc").unwrap();
        verify_binds(&spec_with(&clone, vec![bind(BindSource::Host(canonical))])).unwrap();
        let moved = spec_with(&clone, vec![bind(BindSource::Host("/no/such".into()))]);
        assert!(verify_binds(&moved).is_err());
    }
}
