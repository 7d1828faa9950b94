//! A project's devcontainer.json, read, substituted and validated into plain types.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::jsonc;
use super::lifecycle::{parse_lifecycle, LifecycleCommand};
use super::lookup::find_config;
use super::run_args::{parse_run_args, RunArgs};
use super::variables::Variables;
use crate::error::{Error, ErrorCode, Result};

/// The seeds mount the clone at `/workspace` (the devcontainers CLI would use
/// `/workspaces/<basename>`).
pub const DEFAULT_WORKSPACE_FOLDER: &str = "/workspace";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildConfig {
    pub dockerfile: PathBuf,
    pub context: PathBuf,
    pub args: BTreeMap<String, String>,
    pub target: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountSpec {
    /// `bind` or `volume`.
    pub kind: String,
    pub source: String,
    pub target: String,
    pub readonly: bool,
}

#[derive(Debug, Clone, Default)]
pub struct DevcontainerConfig {
    pub config_path: PathBuf,
    pub name: Option<String>,
    pub image: Option<String>,
    pub build: Option<BuildConfig>,
    pub container_env: BTreeMap<String, String>,
    pub remote_env: BTreeMap<String, String>,
    pub mounts: Vec<MountSpec>,
    pub workspace_folder: String,
    pub workspace_mount: Option<MountSpec>,
    pub container_user: Option<String>,
    pub remote_user: Option<String>,
    pub run_args: RunArgs,
    pub privileged: bool,
    pub initialize_command: Option<LifecycleCommand>,
    pub on_create_command: Option<LifecycleCommand>,
    pub update_content_command: Option<LifecycleCommand>,
    pub post_create_command: Option<LifecycleCommand>,
    pub post_start_command: Option<LifecycleCommand>,
    pub post_attach_command: Option<LifecycleCommand>,
    /// Fields read but not acted on (`features`, `forwardPorts`, …).
    pub warnings: Vec<String>,
}

fn invalid(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::Devcontainer,
        format!("{}: {why}", path.display()),
    )
}

/// A stable id for the project's dev container (from the project path).
pub fn devcontainer_id(project: &Path) -> String {
    hex::encode(Sha256::digest(project.to_string_lossy().as_bytes()))[..32].to_string()
}

/// The project's devcontainer.json, or `None` when it has none.
pub fn read_devcontainer_config(project: &Path) -> Result<Option<DevcontainerConfig>> {
    let Some(path) = find_config(project) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path).map_err(|e| invalid(&path, e))?;
    let mut value: Value = serde_json::from_str(&jsonc::strip(&text)).map_err(|e| {
        invalid(
            &path,
            format_args!("line {} column {}: {e}", e.line(), e.column()),
        )
    })?;
    let Value::Object(_) = &value else {
        return Err(invalid(&path, "the top level must be an object"));
    };
    let project_text = project.to_string_lossy().into_owned();
    let mut vars = Variables {
        local_workspace_folder: project_text,
        container_workspace_folder: DEFAULT_WORKSPACE_FOLDER.into(),
        devcontainer_id: devcontainer_id(project),
        local_env: std::env::vars().collect::<HashMap<_, _>>(),
    };
    if let Some(folder) = value.get("workspaceFolder").and_then(Value::as_str) {
        vars.container_workspace_folder = vars.substitute(folder);
    }
    vars.apply(&mut value);
    let Value::Object(map) = value else {
        unreachable!("checked above");
    };
    parse(&path, &map)
}

fn string(map: &Map<String, Value>, key: &str, path: &Path) -> Result<Option<String>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(path, format_args!("{key} must be a string"))),
    }
}

fn string_map(
    map: &Map<String, Value>,
    key: &str,
    path: &Path,
) -> Result<BTreeMap<String, String>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                Value::Number(n) => Ok((k.clone(), n.to_string())),
                Value::Bool(b) => Ok((k.clone(), b.to_string())),
                _ => Err(invalid(path, format_args!("{key}.{k} must be a string"))),
            })
            .collect(),
        Some(_) => Err(invalid(
            path,
            format_args!("{key} must be an object of strings"),
        )),
    }
}

/// `type=bind,source=/a,target=/b[,readonly]` or `{ type, source, target, readonly }`.
fn mount(value: &Value, field: &str, path: &Path) -> Result<MountSpec> {
    let mut spec = MountSpec {
        kind: "bind".into(),
        source: String::new(),
        target: String::new(),
        readonly: false,
    };
    match value {
        Value::String(text) => {
            for part in text.split(',') {
                let (key, val) = part.split_once('=').unwrap_or((part, "true"));
                match key.trim() {
                    "type" => spec.kind = val.into(),
                    "source" | "src" => spec.source = val.into(),
                    "target" | "destination" | "dst" => spec.target = val.into(),
                    "readonly" | "ro" => spec.readonly = val != "false",
                    "consistency" => {}
                    other => {
                        return Err(invalid(
                            path,
                            format_args!("{field}: unknown mount option '{other}'"),
                        ))
                    }
                }
            }
        }
        Value::Object(obj) => {
            let get = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
            spec.kind = get("type").unwrap_or_else(|| "bind".into());
            spec.source = get("source").unwrap_or_default();
            spec.target = get("target").unwrap_or_default();
            spec.readonly = obj
                .get("readonly")
                .and_then(Value::as_bool)
                .unwrap_or(false);
        }
        _ => {
            return Err(invalid(
                path,
                format_args!("{field} must be a string or an object"),
            ))
        }
    }
    if !matches!(spec.kind.as_str(), "bind" | "volume") {
        return Err(invalid(
            path,
            format_args!("{field}: mount type '{}' is not bind or volume", spec.kind),
        ));
    }
    if spec.source.is_empty() || !spec.target.starts_with('/') {
        return Err(invalid(
            path,
            format_args!("{field} needs a source and an absolute target"),
        ));
    }
    Ok(spec)
}

/// `a/b/../c` → `a/c`, without touching the file system.
fn lexical(path: PathBuf) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn parse(path: &Path, map: &Map<String, Value>) -> Result<Option<DevcontainerConfig>> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut config = DevcontainerConfig {
        config_path: path.to_path_buf(),
        name: string(map, "name", path)?,
        image: string(map, "image", path)?,
        container_env: string_map(map, "containerEnv", path)?,
        remote_env: string_map(map, "remoteEnv", path)?,
        container_user: string(map, "containerUser", path)?,
        remote_user: string(map, "remoteUser", path)?,
        workspace_folder: string(map, "workspaceFolder", path)?
            .unwrap_or_else(|| DEFAULT_WORKSPACE_FOLDER.into()),
        privileged: map
            .get("privileged")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..Default::default()
    };
    if !config.workspace_folder.starts_with('/') {
        return Err(invalid(
            path,
            "workspaceFolder must be an absolute container path",
        ));
    }
    if let Some(build) = map.get("build") {
        let Value::Object(b) = build else {
            return Err(invalid(path, "build must be an object"));
        };
        let dockerfile = string(b, "dockerfile", path)?
            .ok_or_else(|| invalid(path, "build.dockerfile is required"))?;
        let dockerfile = lexical(dir.join(dockerfile));
        if !dockerfile.is_file() {
            return Err(invalid(
                path,
                format_args!("build.dockerfile {} does not exist", dockerfile.display()),
            ));
        }
        config.build = Some(BuildConfig {
            dockerfile,
            context: lexical(dir.join(string(b, "context", path)?.unwrap_or_else(|| ".".into()))),
            args: string_map(b, "args", path)?,
            target: string(b, "target", path)?,
        });
    }
    if let Some(mounts) = map.get("mounts") {
        let Value::Array(items) = mounts else {
            return Err(invalid(path, "mounts must be an array"));
        };
        for (i, item) in items.iter().enumerate() {
            config
                .mounts
                .push(mount(item, &format!("mounts[{i}]"), path)?);
        }
    }
    if let Some(m) = map.get("workspaceMount").filter(|v| !v.is_null()) {
        config.workspace_mount = Some(mount(m, "workspaceMount", path)?);
        if !map.contains_key("workspaceFolder") {
            return Err(invalid(path, "workspaceMount needs workspaceFolder too"));
        }
    }
    if let Some(args) = map.get("runArgs") {
        let list: Option<Vec<String>> = args
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect())
            .unwrap_or(None);
        let list = list.ok_or_else(|| invalid(path, "runArgs must be an array of strings"))?;
        config.run_args = parse_run_args(&list).map_err(|e| invalid(path, e.message))?;
    }
    let lifecycle = |key: &str| -> Result<Option<LifecycleCommand>> {
        map.get(key)
            .filter(|v| !v.is_null())
            .map(|v| parse_lifecycle(v, key).map_err(|e| invalid(path, e.message)))
            .transpose()
    };
    config.initialize_command = lifecycle("initializeCommand")?;
    config.on_create_command = lifecycle("onCreateCommand")?;
    config.update_content_command = lifecycle("updateContentCommand")?;
    config.post_create_command = lifecycle("postCreateCommand")?;
    config.post_start_command = lifecycle("postStartCommand")?;
    config.post_attach_command = lifecycle("postAttachCommand")?;
    for unsupported in [
        "features",
        "forwardPorts",
        "appPort",
        "dockerComposeFile",
        "portsAttributes",
    ] {
        if map.contains_key(unsupported) {
            config
                .warnings
                .push(format!("{unsupported} is not supported and was ignored"));
        }
    }
    Ok(Some(config))
}
