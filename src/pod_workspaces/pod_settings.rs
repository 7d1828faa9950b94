//! devcontainer.json for a session on a cluster: read under the host's trust as on the
//! engines (a Compose config's other services kept for the Pod), and what a cluster cannot
//! give refused by field (`UNSUPPORTED`) before the Pod is made — an image build, features,
//! a network of its own. The session's record and Pod config come from these settings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::pod_names::pod_name;
use super::pod_sessions::{blocking_error, CreatePodWorkspace};
use crate::clone::branch_name;
use crate::compose_services::StoredServices;
use crate::container_runtime::ContainerConfig;
use crate::devcontainer::{read_for_session, DevcontainerConfig, DEFAULT_WORKSPACE_FOLDER};
use crate::error::{Error, ErrorCode, Result};
use crate::runtime::Lifetime;
use crate::session_settings::{
    resolve_settings, ImageChoice, SessionSettings, SettingsRequest, Trust,
};
use crate::workspace::{owner_for, read_compose_session, run_on_host, Storage, WorkspaceRecord};

/// Said in every devcontainer session's warnings: what the engines read from the image.
pub const METADATA_UNREAD: &str = "the image's devcontainer.metadata label is not read on Kubernetes (the API server does not show an image's labels): set what it holds (remoteUser, lifecycle commands) in devcontainer.json";

/// The project's devcontainer.json, read as the engines read it (`local_folder` is the
/// session clone); `None` when the project has none or `devcontainer` is off.
async fn read_config(
    project: &Path,
    clone: &Path,
    trust: &Trust,
) -> Result<Option<DevcontainerConfig>> {
    let (at, local_folder, allowed) = (
        project.to_path_buf(),
        clone.to_path_buf(),
        trust.local_env.clone(),
    );
    tokio::task::spawn_blocking(move || read_for_session(&at, &local_folder, &allowed))
        .await
        .map_err(blocking_error)?
}

/// `UNSUPPORTED` naming the config's field and why a cluster cannot give it.
fn refuse(config_path: &str, field: &str, why: &str) -> Error {
    Error::new(
        ErrorCode::Unsupported,
        format!("{config_path}: {field} is not supported for sessions on Kubernetes: {why}"),
    )
}

/// What the settings ask that no session Pod gets, before anything is made.
fn check_for_cluster(settings: &SessionSettings) -> Result<()> {
    let path = settings
        .config_path
        .as_deref()
        .unwrap_or("devcontainer.json");
    if let ImageChoice::Built { .. } = settings.image {
        return Err(refuse(
            path,
            "build (a Dockerfile)",
            "a cluster builds no images; build and push the image, then name it in `image`",
        ));
    }
    if !settings.features.is_empty() {
        return Err(refuse(
            path,
            &format!("features ({} of them)", settings.features.len()),
            "installing features needs an image build; use an image that has them",
        ));
    }
    if let Some(network) = &settings.network {
        return Err(refuse(
            path,
            &format!("runArgs --network {network}"),
            "a session Pod has no route out (its egress goes through the session relay)",
        ));
    }
    Ok(())
}

/// The settings of a new session from the project's devcontainer.json under `trust` (and
/// a Compose config's other services), `initializeCommand` run on the host (the trust
/// allowing it); `None` without one.
pub(super) async fn devcontainer_settings(
    request: &CreatePodWorkspace,
    default_image: Option<&str>,
    trust: &Trust,
    clone: &Path,
) -> Result<Option<(SessionSettings, Option<StoredServices>)>> {
    if !request.devcontainer {
        return Ok(None);
    }
    let project = Path::new(&request.project_dir);
    let Some(config) = read_config(project, clone, trust).await? else {
        return Ok(None);
    };
    let (config, services) = match config.compose {
        Some(_) => {
            let (at, local, trust) = (project.to_path_buf(), clone.to_path_buf(), trust.clone());
            let session = tokio::task::spawn_blocking(move || {
                read_compose_session(&config, &at, &local, &trust, &[])
            })
            .await
            .map_err(blocking_error)??;
            (session.config, Some(session.services))
        }
        None => (config, None),
    };
    let settings_request = SettingsRequest {
        project,
        clone,
        image: request.image.as_deref(),
        default_image,
        env: &request.env,
        network: None,
        trust,
        engine_sockets: &[],
        session_id: &request.session_id,
        mount_path: DEFAULT_WORKSPACE_FOLDER,
    };
    let mut settings = resolve_settings(&settings_request, &config)?;
    check_for_cluster(&settings)?;
    if let Some(init) = &settings.lifecycle.initialize {
        run_on_host(project, init).await?;
    }
    settings.warnings.push(METADATA_UNREAD.to_string());
    Ok(Some((settings, services)))
}

/// A new session's record: its settings' image, folder and variables where it has
/// devcontainer.json, else the host's image at `/workspace` with create's variables.
pub(super) fn session_record(
    request: &CreatePodWorkspace,
    base: &Path,
    (clone_path, start_commit): (PathBuf, git2::Oid),
    image: Option<String>,
    devcontainer: Option<(SessionSettings, Option<StoredServices>)>,
) -> WorkspaceRecord {
    let (settings, compose) = devcontainer.unzip();
    let (image, mount_path, pod_env) = match &settings {
        Some(s) => (
            s.image.name().to_string(),
            s.mount_path.clone(),
            s.env.clone(),
        ),
        None => (
            image.unwrap_or_default(),
            DEFAULT_WORKSPACE_FOLDER.to_string(),
            request.env.clone(),
        ),
    };
    WorkspaceRecord {
        session_id: request.session_id.clone(),
        project_dir: request.project_dir.clone(),
        clone_path: clone_path.to_string_lossy().into_owned(),
        branch_name: branch_name(&request.session_id),
        base_commit: Some(start_commit.to_string()),
        repository_url: None,
        snapshot_of: None,
        container_id: pod_name(base, &request.session_id),
        container_mount_path: mount_path,
        storage: Storage::Pod,
        volume: None,
        image,
        lifetime: request.lifetime.as_str().to_string(),
        devcontainer: settings.is_some(),
        created_at_ms: chrono::Utc::now().timestamp_millis(),
        settings,
        compose: compose.flatten(),
        checkpoint_image: None,
        owner: owner_for(request.lifetime),
        pod_env,
        pod_resources: Default::default(),
        pod_egress: None,
    }
}

/// `uid[:gid]`, all digits: what a Pod's `runAsUser` takes.
fn numeric_user(user: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match user.split_once(':') {
        Some((uid, gid)) => digits(uid) && digits(gid),
        None => digits(user),
    }
}

/// The Pod's container config: the session's settings (the clone's mount left out: the
/// clone is copied in), else the plain session's image and folder; never a network.
pub(super) fn pod_config(
    record: &WorkspaceRecord,
    environment: BTreeMap<String, String>,
) -> ContainerConfig {
    let mut config = match &record.settings {
        Some(settings) => {
            let mut config = settings.container_config();
            // `mounts[0]` is the clone's own, which is copied in instead.
            config.mounts = settings
                .mounts
                .iter()
                .skip(1)
                .map(|m| m.mount.clone())
                .collect();
            // A named user is resolved by the agent for each command; the Pod's own
            // process keeps the image's user.
            config.user = config.user.filter(|u| numeric_user(u));
            config
        }
        None => ContainerConfig {
            working_directory: record.container_mount_path.clone(),
            ..Default::default()
        },
    };
    // The services listen on the Pod's loopback: their names (and the session's own
    // service's) lead there, as they do on the engines.
    if let Some(services) = &record.compose {
        let names = services.services.iter().map(|s| s.name.as_str());
        for name in names.chain(std::iter::once(services.app_service.as_str())) {
            config.extra_hosts.push(format!("{name}:127.0.0.1"));
        }
    }
    config.name = Some(record.container_id.clone());
    config.image = Some(record.image.clone());
    // No route out: connections go through the relay (`pod_egress`), and the deny-all
    // NetworkPolicy selects the Pod.
    config.network = Some("none".to_string());
    config.environment = environment;
    config.resources = record.pod_resources;
    config.lifetime = Lifetime::parse(&record.lifetime).unwrap_or_default();
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_network_of_its_own_is_refused_by_name() {
        let mut settings = SessionSettings::plain(Path::new("/c"), "img".into(), "/workspace");
        assert!(check_for_cluster(&settings).is_ok());
        settings.network = Some("host".into());
        let err = check_for_cluster(&settings).unwrap_err();
        assert_eq!(err.code, ErrorCode::Unsupported);
        assert!(
            err.message.contains("runArgs --network host"),
            "{}",
            err.message
        );
    }

    #[test]
    fn only_numeric_users_reach_the_pod() {
        for yes in ["0", "1000", "1000:1000"] {
            assert!(numeric_user(yes), "{yes}");
        }
        for no in ["vscode", "", "1000:", ":1", "1000:staff", "-1"] {
            assert!(!numeric_user(no), "{no}");
        }
    }
}
