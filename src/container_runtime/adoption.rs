//! Taking over a container that outlived the process that created it (Lace's `adopt`):
//! which container a config names, and whether it is the one the config describes.

use std::collections::BTreeSet;

use super::container_config::ContainerConfig;
use crate::error::{Error, Result};
use crate::runtime::labels;
use crate::runtime::ContainerInfo;
use crate::runtime::MountKind;
use crate::runtime::OwnerIdentity;
use crate::runtime::{owner_status, OwnerStatus};

/// The container a config names: `name` as `create` would have used it, else `id`.
pub fn adopted_id(config: &ContainerConfig) -> Result<String> {
    let present = |t: &Option<String>| t.clone().filter(|t| !t.is_empty());
    present(&config.name)
        .or_else(|| present(&config.id))
        .ok_or_else(|| {
            Error::invalid_argument("adopt: config.id or config.name names the container")
        })
}

fn trimmed(path: &str) -> &str {
    match path.trim_end_matches('/') {
        "" => "/",
        trimmed => trimmed,
    }
}

/// Refuses a container whose bind mounts are not the config's (another container of the
/// same name would reach other host paths), and a `process`-lifetime container whose
/// creating process is gone (it is an orphan, which `reapOrphans` removes).
pub fn check_adoptable(config: &ContainerConfig, info: &ContainerInfo) -> Result<()> {
    let set = |mounts: Vec<(String, String, bool)>| -> BTreeSet<(String, String, bool)> {
        mounts.into_iter().collect()
    };
    let wanted = set(config
        .mounts
        .iter()
        .filter(|m| m.kind == MountKind::Bind)
        .map(|m| {
            (
                trimmed(&m.source).to_string(),
                trimmed(&m.target).to_string(),
                m.readonly,
            )
        })
        .collect());
    let found = set(info
        .mounts
        .iter()
        .map(|m| {
            (
                trimmed(&m.source).to_string(),
                trimmed(&m.target).to_string(),
                m.readonly,
            )
        })
        .collect());
    if wanted != found {
        let show = |s: &BTreeSet<(String, String, bool)>| {
            s.iter()
                .map(|(src, dst, ro)| format!("{src}:{dst}{}", if *ro { ":ro" } else { "" }))
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(Error::invalid_argument(format!(
            "adopt: container '{}' has bind mounts [{}], the config asks for [{}]",
            info.id,
            show(&found),
            show(&wanted)
        )));
    }
    let process_lifetime = info.labels.get(labels::LIFETIME).map(String::as_str) == Some("process");
    let owner = || {
        owner_status(
            &info.labels.clone().into_iter().collect(),
            OwnerIdentity::current(),
        )
    };
    if process_lifetime && owner() == OwnerStatus::Gone {
        return Err(Error::invalid_argument(format!(
            "adopt: container '{}' has lifetime 'process' and the process that created it is gone; only 'session'-lifetime containers outlive their process",
            info.id
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{ContainerMount, ContainerState};

    fn info(mounts: Vec<ContainerMount>) -> ContainerInfo {
        ContainerInfo {
            id: "c".into(),
            name: Some("c".into()),
            engine_id: "e".into(),
            state: ContainerState::Running,
            pid: None,
            started_at: None,
            stopped_at: None,
            exit_code: None,
            image: None,
            labels: Default::default(),
            mounts,
        }
    }

    #[test]
    fn mounts_must_match_up_to_trailing_slashes() {
        let config = ContainerConfig {
            name: Some("c".into()),
            mounts: vec![ContainerMount::bind("/h/w/", "/workspace", false)],
            ..Default::default()
        };
        assert_eq!(adopted_id(&config).unwrap(), "c");
        let same = info(vec![ContainerMount::bind("/h/w", "/workspace/", false)]);
        assert!(check_adoptable(&config, &same).is_ok());
        let other = info(vec![ContainerMount::bind("/h/other", "/workspace", false)]);
        assert!(check_adoptable(&config, &other).is_err());
        let readonly = info(vec![ContainerMount::bind("/h/w", "/workspace", true)]);
        assert!(check_adoptable(&config, &readonly).is_err());
        assert!(adopted_id(&ContainerConfig::default()).is_err());
    }
}
