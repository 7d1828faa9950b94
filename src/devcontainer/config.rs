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
use crate::project_dir::project_dir;

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
    /// `runArgs` as written (after substitution), every one of them within the subset.
    pub run_args_text: Vec<String>,
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

/// The project's devcontainer.json, or `None` when it has none. The project directory must
/// exist (`ENOENT`/`ENOTDIR` otherwise); a relative path is taken from the current directory.
pub fn read_devcontainer_config(project: &Path) -> Result<Option<DevcontainerConfig>> {
    let project = project_dir(project)?;
    let Some(path) = find_config(&project) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(&path).map_err(|e| invalid(&path, e))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut value: Value =
        serde_json::from_str(&jsonc::strip(text)).map_err(|e| syntax_error(&path, &e))?;
    let Value::Object(_) = &value else {
        return Err(invalid(&path, "the top level must be an object"));
    };
    let mut vars = Variables {
        local_workspace_folder: project.to_string_lossy().into_owned(),
        container_workspace_folder: DEFAULT_WORKSPACE_FOLDER.into(),
        devcontainer_id: devcontainer_id(&project),
        local_env: std::env::vars().collect::<HashMap<_, _>>(),
    };
    if let Some(folder) = value.get("workspaceFolder").and_then(Value::as_str) {
        vars.container_workspace_folder = vars.substitute(folder);
    }
    vars.apply(&mut value);
    let Value::Object(map) = value else {
        unreachable!("checked above");
    };
    parse(&path, &map, &vars.local_env)
}

/// `<file>: line L column C: <what>`; serde_json's own text repeats the position at its end.
fn syntax_error(path: &Path, err: &serde_json::Error) -> Error {
    let text = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let what = text.strip_suffix(&suffix).unwrap_or(&text);
    invalid(
        path,
        format_args!("line {} column {}: {what}", err.line(), err.column()),
    )
}

fn string(map: &Map<String, Value>, key: &str, path: &Path) -> Result<Option<String>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(invalid(path, format_args!("{key} must be a string"))),
    }
}

/// Absent or null is false; anything but true or false is refused, naming `what`.
fn boolean(map: &Map<String, Value>, key: &str, what: &str, path: &Path) -> Result<bool> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(invalid(path, format_args!("{what} must be true or false"))),
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

/// `type=bind,source=/a,target=/b[,readonly]` or `{ type, source, target, readonly }`. Other
/// mount types than bind and volume come back as `Err(warning)` inside `Ok`.
fn mount(
    value: &Value,
    field: &str,
    path: &Path,
) -> Result<std::result::Result<MountSpec, String>> {
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
            spec.readonly = boolean(obj, "readonly", &format!("{field}.readonly"), path)?;
        }
        _ => {
            return Err(invalid(
                path,
                format_args!("{field} must be a string or an object"),
            ))
        }
    }
    if !matches!(spec.kind.as_str(), "bind" | "volume") {
        return Ok(Err(format!(
            "{field}: mount type '{}' is not supported and was ignored",
            spec.kind
        )));
    }
    if spec.source.is_empty() || !spec.target.starts_with('/') {
        return Err(invalid(
            path,
            format_args!("{field} needs a source and an absolute target"),
        ));
    }
    Ok(Ok(spec))
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

fn parse(
    path: &Path,
    map: &Map<String, Value>,
    local_env: &HashMap<String, String>,
) -> Result<Option<DevcontainerConfig>> {
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
        privileged: boolean(map, "privileged", "privileged", path)?,
        ..Default::default()
    };
    if !config.workspace_folder.starts_with('/') {
        return Err(invalid(
            path,
            "workspaceFolder must be an absolute container path",
        ));
    }
    config.build = build(map, dir, path)?;
    if let Some(mounts) = map.get("mounts") {
        let Value::Array(items) = mounts else {
            return Err(invalid(path, "mounts must be an array"));
        };
        for (i, item) in items.iter().enumerate() {
            match mount(item, &format!("mounts[{i}]"), path)? {
                Ok(spec) => config.mounts.push(spec),
                Err(warning) => config.warnings.push(warning),
            }
        }
    }
    if let Some(m) = map.get("workspaceMount").filter(|v| !v.is_null()) {
        match mount(m, "workspaceMount", path)? {
            Ok(spec) => config.workspace_mount = Some(spec),
            Err(_) => {
                return Err(invalid(
                    path,
                    "workspaceMount must be a bind or volume mount",
                ))
            }
        }
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
        config.run_args = parse_run_args(&list, local_env).map_err(|e| invalid(path, e.message))?;
        config.run_args_text = list;
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
        "capAdd",
        "securityOpt",
    ] {
        if map.contains_key(unsupported) {
            config
                .warnings
                .push(format!("{unsupported} is not supported and was ignored"));
        }
    }
    Ok(Some(config))
}

/// `build` (`dockerfile`, `context`, `args`, `target`), or the older top-level `dockerFile` and
/// `context`; paths are relative to the folder of devcontainer.json.
fn build(map: &Map<String, Value>, dir: &Path, path: &Path) -> Result<Option<BuildConfig>> {
    let empty = Map::new();
    let b = match map.get("build") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(b)) => b,
        Some(_) => return Err(invalid(path, "build must be an object")),
    };
    let dockerfile = match string(b, "dockerfile", path)? {
        Some(file) => file,
        None => match string(map, "dockerFile", path)? {
            Some(file) => file,
            None if b.is_empty() => return Ok(None),
            None => return Err(invalid(path, "build.dockerfile is required")),
        },
    };
    let dockerfile = lexical(dir.join(dockerfile));
    if !dockerfile.is_file() {
        return Err(invalid(
            path,
            format_args!("build.dockerfile {} does not exist", dockerfile.display()),
        ));
    }
    let context = match string(b, "context", path)? {
        Some(context) => context,
        None => string(map, "context", path)?.unwrap_or_else(|| ".".into()),
    };
    Ok(Some(BuildConfig {
        dockerfile,
        context: lexical(dir.join(context)),
        args: string_map(b, "args", path)?,
        target: string(b, "target", path)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Project(PathBuf);

    impl Project {
        fn with(files: &[(&str, &str)]) -> Self {
            let dir = std::env::temp_dir().join(format!("ci-dc-{}", uuid::Uuid::new_v4()));
            for (name, text) in files {
                let file = dir.join(name);
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(file, text).unwrap();
            }
            std::fs::create_dir_all(&dir).unwrap();
            Project(dir)
        }

        fn read(&self) -> Result<Option<DevcontainerConfig>> {
            read_devcontainer_config(&self.0)
        }
    }

    impl Drop for Project {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let project = Project::with(&[(".devcontainer.json", "\u{feff}{ \"name\": \"bom\" }")]);
        assert_eq!(
            project.read().unwrap().unwrap().name.as_deref(),
            Some("bom")
        );
    }

    #[test]
    fn a_syntax_error_names_file_line_and_column_once() {
        let project = Project::with(&[(".devcontainer.json", "{\n  // c\n  \"a\": [1,,]\n}")]);
        let err = project.read().unwrap_err();
        assert_eq!(err.code, ErrorCode::Devcontainer);
        let file = project.0.join(".devcontainer.json");
        assert_eq!(
            err.message,
            format!("{}: line 3 column 11: expected value", file.display())
        );
    }

    #[test]
    fn the_older_top_level_dockerfile_and_context_still_build() {
        let project = Project::with(&[
            (
                ".devcontainer/devcontainer.json",
                r#"{ "dockerFile": "Dockerfile", "context": ".." }"#,
            ),
            (".devcontainer/Dockerfile", "FROM scratch\n"),
        ]);
        let build = project.read().unwrap().unwrap().build.unwrap();
        assert_eq!(build.dockerfile, project.0.join(".devcontainer/Dockerfile"));
        assert_eq!(build.context, project.0);
    }

    #[test]
    fn unsupported_mount_types_and_fields_become_warnings() {
        let project = Project::with(&[(
            ".devcontainer.json",
            r#"{ "mounts": ["type=tmpfs,target=/scratch", "source=/a,target=/b"], "capAdd": ["SYS_PTRACE"] }"#,
        )]);
        let config = project.read().unwrap().unwrap();
        assert_eq!(config.mounts.len(), 1);
        assert_eq!(
            config.warnings,
            [
                "mounts[0]: mount type 'tmpfs' is not supported and was ignored",
                "capAdd is not supported and was ignored"
            ]
        );
    }

    #[test]
    fn wrong_types_are_refused() {
        for text in [
            r#"{ "privileged": "yes" }"#,
            r#"{ "build": { "context": ".." } }"#,
            r#"{ "mounts": [{ "source": "/a", "target": "/b", "readonly": "yes" }] }"#,
            r#"{ "workspaceMount": "source=/a,target=/b" }"#,
            r#"{ "workspaceFolder": "relative" }"#,
            r#"[]"#,
        ] {
            let project = Project::with(&[(".devcontainer.json", text)]);
            let err = project.read().unwrap_err();
            assert_eq!(err.code, ErrorCode::Devcontainer, "{text}");
        }
    }

    #[test]
    fn variables_see_the_absolute_project_path() {
        let project = Project::with(&[(
            ".devcontainer.json",
            r#"{ "name": "${localWorkspaceFolderBasename}", "workspaceFolder": "/w/${localWorkspaceFolderBasename}", "remoteEnv": { "ID": "${devcontainerId}", "D": "${containerWorkspaceFolderBasename}" } }"#,
        )]);
        let config = project.read().unwrap().unwrap();
        let basename = project.0.file_name().unwrap().to_str().unwrap();
        assert_eq!(config.name.as_deref(), Some(basename));
        assert_eq!(config.workspace_folder, format!("/w/{basename}"));
        assert_eq!(config.remote_env["ID"], devcontainer_id(&project.0));
        assert_eq!(config.remote_env["D"], basename);
    }

    #[test]
    fn a_missing_project_is_enoent_and_one_without_config_is_none() {
        let project = Project::with(&[("README", "")]);
        assert!(project.read().unwrap().is_none());
        let err = read_devcontainer_config(&project.0.join("nope")).unwrap_err();
        assert_eq!(err.code, ErrorCode::Enoent);
        let err = read_devcontainer_config(&project.0.join("README")).unwrap_err();
        assert_eq!(err.code, ErrorCode::Enotdir);
    }
}
