//! A project's devcontainer.json, read, substituted and validated into plain types. Reading
//! applies no policy: whatever the file asks for that would reach the host is reported, and
//! the caller (a session's trust check) decides.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::build_config::{parse_build, BuildConfig};
use super::compose::{parse_compose, ComposeConfig};
use super::features::{parse_features, FeatureRequest};
use super::fields::{invalid, one_of, string, string_list};
use super::host_env::HostEnv;
use super::host_requirements::{parse_host_requirements, HostRequirements};
use super::image_metadata::parse_entry;
use super::jsonc;
use super::lifecycle::{parse_lifecycle, LifecycleCommand};
use super::lookup::find_config;
use super::mount_spec::{parse_mount, MountSpec};
use super::port_requests::{parse_port_requests, PortRequest};
use super::run_args::{parse_run_args, RunArgs};
use super::unhonoured::unhonoured_warnings;
use super::variables::{basename, Variables};
use crate::error::{ErrorCode, Result};
use crate::project_dir::project_dir;

/// The seeds mount the clone at `/workspace` (the devcontainers CLI would use
/// `/workspaces/<basename>`).
pub const DEFAULT_WORKSPACE_FOLDER: &str = "/workspace";

/// The most read of a devcontainer.json (a larger one is refused).
const CONFIG_LIMIT: u64 = 1 << 20;

/// The lifecycle steps `waitFor` may name.
pub const WAIT_FOR: &[&str] = &[
    "initializeCommand",
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
];

#[derive(Debug, Clone, Default)]
pub struct DevcontainerConfig {
    pub config_path: PathBuf,
    pub name: Option<String>,
    pub image: Option<String>,
    pub build: Option<BuildConfig>,
    pub container_env: BTreeMap<String, String>,
    /// A null value unsets the variable.
    pub remote_env: BTreeMap<String, Option<String>>,
    pub mounts: Vec<MountSpec>,
    pub workspace_folder: String,
    pub workspace_mount: Option<MountSpec>,
    pub container_user: Option<String>,
    pub remote_user: Option<String>,
    /// `runArgs` as written (after substitution), every one of them understood.
    pub run_args_text: Vec<String>,
    pub run_args: RunArgs,
    pub privileged: bool,
    pub cap_add: Vec<String>,
    pub security_opt: Vec<String>,
    pub initialize_command: Option<LifecycleCommand>,
    pub on_create_command: Option<LifecycleCommand>,
    pub update_content_command: Option<LifecycleCommand>,
    pub post_create_command: Option<LifecycleCommand>,
    pub post_start_command: Option<LifecycleCommand>,
    pub post_attach_command: Option<LifecycleCommand>,
    /// `dockerComposeFile` and its `service`, `runServices`: read, never run.
    pub compose: Option<ComposeConfig>,
    pub init: Option<bool>,
    pub override_command: Option<bool>,
    /// A compose config's session service's `entrypoint` and `command` (argv each), run
    /// in place of the image's when `overrideCommand` is false.
    pub service_entrypoint: Option<Vec<String>>,
    pub service_command: Option<Vec<String>>,
    pub shutdown_action: Option<String>,
    pub update_remote_user_uid: Option<bool>,
    pub user_env_probe: Option<String>,
    pub wait_for: Option<String>,
    pub features: Vec<FeatureRequest>,
    pub override_feature_install_order: Vec<String>,
    /// Host environment variables the file asked for that the reader was not allowed to
    /// read (they were substituted as unset).
    pub denied_env: Vec<String>,
    /// `forwardPorts` then `appPort`, as a session serves them on the host.
    pub ports: Vec<PortRequest>,
    /// `hostRequirements`, compared with a session's limits when it is created.
    pub host_requirements: Option<HostRequirements>,
    /// What the file asks for that is not acted on (a compose config, …).
    pub warnings: Vec<String>,
}

/// How to read: where `${localWorkspaceFolder}` points, and which host environment
/// `${localEnv:…}` may read.
pub struct ReadOptions {
    /// The folder the container will have as its workspace (a session's clone); default the
    /// project itself.
    pub local_folder: Option<PathBuf>,
    pub host_env: HostEnv,
}

/// A stable id for a dev container (from the folder it is made for).
pub fn devcontainer_id(folder: &Path) -> String {
    hex::encode(Sha256::digest(folder.to_string_lossy().as_bytes()))[..32].to_string()
}

/// The project's devcontainer.json as the project's own folder sees it, the whole host
/// environment readable; `None` when it has none. The project directory must exist
/// (`ENOENT`/`ENOTDIR` otherwise); a relative path is taken from the current directory.
pub fn read_devcontainer_config(project: &Path) -> Result<Option<DevcontainerConfig>> {
    read_devcontainer_config_with(
        project,
        ReadOptions {
            local_folder: None,
            host_env: HostEnv::all(),
        },
    )
}

/// The project's devcontainer.json as a session reads it: `${localWorkspaceFolder}` is the
/// session's `clone`, and only the host variables `allowed` names (`*`: all) are seen.
pub fn read_for_session(
    project: &Path,
    clone: &Path,
    allowed: &[String],
) -> Result<Option<DevcontainerConfig>> {
    let host_env = HostEnv::only(std::env::vars().collect(), allowed);
    read_devcontainer_config_with(
        project,
        ReadOptions {
            local_folder: Some(clone.to_path_buf()),
            host_env,
        },
    )
}

pub fn read_devcontainer_config_with(
    project: &Path,
    options: ReadOptions,
) -> Result<Option<DevcontainerConfig>> {
    let project = project_dir(project)?;
    let Some(path) = find_config(&project) else {
        return Ok(None);
    };
    let text = read_limited(&path)?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut value: Value =
        serde_json::from_str(&jsonc::strip(text)).map_err(|e| syntax_error(&path, &e))?;
    let Value::Object(_) = &value else {
        return Err(invalid(&path, "the top level must be an object"));
    };
    let local_folder = options.local_folder.unwrap_or_else(|| project.clone());
    let mut vars = Variables {
        local_workspace_folder: local_folder.to_string_lossy().into_owned(),
        local_workspace_folder_basename: basename(&project.to_string_lossy()).to_string(),
        container_workspace_folder: DEFAULT_WORKSPACE_FOLDER.into(),
        devcontainer_id: devcontainer_id(&local_folder),
        local_env: &options.host_env,
    };
    if let Some(folder) = value.get("workspaceFolder").and_then(Value::as_str) {
        vars.container_workspace_folder = vars.substitute(folder);
    }
    vars.apply(&mut value);
    let Value::Object(map) = value else {
        unreachable!("checked above");
    };
    let mut config = parse(&path, &map, &options.host_env)?;
    config.denied_env = options.host_env.denied();
    Ok(Some(config))
}

fn read_limited(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(CONFIG_LIMIT + 1).read_to_string(&mut text))
        .map_err(|e| invalid(path, e))?;
    if text.len() as u64 > CONFIG_LIMIT {
        return Err(invalid(
            path,
            format_args!("larger than {CONFIG_LIMIT} bytes, the most read of a devcontainer.json"),
        ));
    }
    Ok(text)
}

/// `<file>: line L column C: <what>`; serde_json's own text repeats the position at its end.
fn syntax_error(path: &Path, err: &serde_json::Error) -> crate::error::Error {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let what = text.strip_suffix(&suffix).unwrap_or(&text);
    invalid(
        path,
        format_args!("line {} column {}: {what}", err.line(), err.column()),
    )
}

fn parse(path: &Path, map: &Map<String, Value>, host_env: &HostEnv) -> Result<DevcontainerConfig> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let entry = parse_entry(map, path)?;
    let mut config = DevcontainerConfig {
        config_path: path.to_path_buf(),
        name: string(map, "name", path)?,
        image: string(map, "image", path)?,
        container_env: entry.container_env,
        remote_env: entry.remote_env,
        container_user: entry.container_user,
        remote_user: entry.remote_user,
        workspace_folder: string(map, "workspaceFolder", path)?
            .unwrap_or_else(|| DEFAULT_WORKSPACE_FOLDER.into()),
        privileged: entry.privileged,
        cap_add: entry.cap_add,
        security_opt: entry.security_opt,
        build: parse_build(map, dir, path)?,
        mounts: entry.mounts,
        on_create_command: entry.on_create,
        update_content_command: entry.update_content,
        post_create_command: entry.post_create,
        post_start_command: entry.post_start,
        post_attach_command: entry.post_attach,
        init: entry.init,
        override_command: entry.override_command,
        shutdown_action: entry.shutdown_action,
        update_remote_user_uid: entry.update_remote_user_uid,
        user_env_probe: entry.user_env_probe,
        wait_for: one_of(map, "waitFor", WAIT_FOR, path)?,
        ..Default::default()
    };
    if !config.workspace_folder.starts_with('/') {
        return Err(invalid(
            path,
            "workspaceFolder must be an absolute container path",
        ));
    }
    if let Some(m) = map.get("workspaceMount").filter(|v| !v.is_null()) {
        config.workspace_mount = Some(parse_mount(m, "workspaceMount", path)?);
        if !map.contains_key("workspaceFolder") {
            return Err(invalid(path, "workspaceMount needs workspaceFolder too"));
        }
    }
    config.run_args_text = string_list(map, "runArgs", path)?;
    config.run_args = parse_run_args(&config.run_args_text, host_env).map_err(|e| {
        crate::error::Error::new(
            ErrorCode::Devcontainer,
            format!("{}: {}", path.display(), e.message),
        )
    })?;
    config.initialize_command = map
        .get("initializeCommand")
        .filter(|v| !v.is_null())
        .map(|v| parse_lifecycle(v, "initializeCommand").map_err(|e| invalid(path, e.message)))
        .transpose()?;
    config.compose = parse_compose(map, path)?;
    (config.features, config.override_feature_install_order) = parse_features(map, path)?;
    config.warnings = unhonoured_warnings(map);
    let (ports, port_warnings) = parse_port_requests(map);
    config.ports = ports;
    config.warnings.extend(port_warnings);
    let (requirements, requirement_warnings) = parse_host_requirements(map);
    config.host_requirements = requirements;
    config.warnings.extend(requirement_warnings);
    config.warnings.extend(
        config
            .features
            .iter()
            .filter_map(|f| f.unsupported())
            .map(|why| format!("features: {why}; a session refuses it")),
    );
    Ok(config)
}
#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
