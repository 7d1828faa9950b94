//! `readDevcontainerConfig` (docs/contract.md §6): the project's devcontainer.json as
//! plain objects.

use std::collections::HashMap;
use std::path::PathBuf;

use napi::bindgen_prelude::{Either, Undefined};
use napi_derive::napi;
use serde_json::{json, Value};

use super::clone_manager::blocking;
use super::error::Outcome;
use crate::devcontainer::{self as dc, Command, LifecycleCommand};

#[napi(object)]
pub struct DevcontainerBuild {
    pub dockerfile: String,
    pub context: String,
    pub args: HashMap<String, String>,
    pub target: Option<String>,
}

#[napi(object)]
pub struct DevcontainerMount {
    #[napi(js_name = "type", ts_type = "'bind' | 'volume' | 'tmpfs'")]
    pub kind: String,
    /// A host path (bind), a volume's name (empty: anonymous), empty (tmpfs).
    pub source: String,
    pub target: String,
    pub readonly: bool,
}

/// The part of `runArgs` this library honours, parsed.
#[napi(object)]
pub struct DevcontainerRunOptions {
    /// `-e/--env`.
    pub env: HashMap<String, String>,
    /// `-l/--label`.
    pub labels: HashMap<String, String>,
    /// `-m/--memory`, in bytes.
    pub memory: Option<i64>,
    /// `--cpu-shares`.
    pub cpu_shares: Option<i64>,
    /// `--network/--net`: `none`, `bridge` or a network's name.
    pub network: Option<String>,
    /// `-h/--hostname`.
    pub hostname: Option<String>,
    /// `-u/--user`.
    pub user: Option<String>,
    /// `-w/--workdir`.
    pub workdir: Option<String>,
    /// `--privileged`.
    pub privileged: bool,
    /// `--cap-add`, `--cap-drop`.
    pub cap_add: Vec<String>,
    pub cap_drop: Vec<String>,
    /// `--security-opt`.
    pub security_opt: Vec<String>,
    /// `--device`, as written.
    pub devices: Vec<String>,
    /// `--pid`, `--ipc`, `--uts`, `--userns`, `--cgroupns`: kind → mode.
    pub namespaces: HashMap<String, String>,
    /// `-v/--volume`, `--mount`, `--tmpfs`.
    pub mounts: Vec<DevcontainerMount>,
}

/// One entry of devcontainer.json's `features`.
#[napi(object)]
pub struct DevcontainerFeature {
    /// The reference as written: `./path` or `<registry>/<namespace>/<id>[:tag|@digest]`.
    pub reference: String,
    #[napi(ts_type = "'local' | 'oci'")]
    pub kind: String,
    /// A local feature's folder (absolute; not yet checked against the project).
    pub path: Option<String>,
    /// Its options (a version string is `{ version }`, `true` is `{}`).
    #[napi(ts_type = "Record<string, string | boolean>")]
    pub options: Value,
}

impl From<dc::FeatureRequest> for DevcontainerFeature {
    fn from(f: dc::FeatureRequest) -> Self {
        let (kind, path) = match f.source {
            dc::FeatureSource::Local { path } => {
                ("local", Some(path.to_string_lossy().into_owned()))
            }
            dc::FeatureSource::Oci(_) => ("oci", None),
        };
        DevcontainerFeature {
            reference: f.reference,
            kind: kind.to_string(),
            path,
            options: serde_json::to_value(f.options).unwrap_or_default(),
        }
    }
}

/// A project's devcontainer.json, variables substituted. Fields keep devcontainer.json's
/// names; paths in `build` are absolute.
#[napi(object)]
pub struct DevcontainerConfig {
    pub config_path: String,
    pub name: Option<String>,
    pub image: Option<String>,
    pub build: Option<DevcontainerBuild>,
    pub container_env: HashMap<String, String>,
    pub remote_env: HashMap<String, String>,
    pub mounts: Vec<DevcontainerMount>,
    /// Where the project is in the container; `/workspace` when the file does not say.
    pub workspace_folder: String,
    pub workspace_mount: Option<DevcontainerMount>,
    pub container_user: Option<String>,
    pub remote_user: Option<String>,
    /// `runArgs` as written; every flag is one this library understands (else the read
    /// fails).
    pub run_args: Vec<String>,
    /// `runArgs` parsed.
    pub run_options: DevcontainerRunOptions,
    /// Honoured by `Workspaces` only with `trust.privileged`.
    pub privileged: bool,
    /// Honoured by `Workspaces` only for capabilities in `trust.capabilities`.
    pub cap_add: Vec<String>,
    /// Honoured by `Workspaces` beyond `no-new-privileges` only with
    /// `trust.securityOptions`.
    pub security_opt: Vec<String>,
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub initialize_command: Option<Value>,
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub on_create_command: Option<Value>,
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub update_content_command: Option<Value>,
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub post_create_command: Option<Value>,
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub post_start_command: Option<Value>,
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub post_attach_command: Option<Value>,
    /// `features`, without the ones set to `false`.
    pub features: Vec<DevcontainerFeature>,
    pub override_feature_install_order: Vec<String>,
    /// What was read but is not supported and was ignored (`forwardPorts`, …).
    pub warnings: Vec<String>,
}

fn command_value(command: Command) -> Value {
    match command {
        Command::Shell(s) => json!(s),
        Command::Argv(argv) => json!(argv),
    }
}

fn lifecycle_value(command: Option<LifecycleCommand>) -> Option<Value> {
    command.map(|c| match c {
        LifecycleCommand::Single(c) => command_value(c),
        LifecycleCommand::Parallel(named) => Value::Object(
            named
                .into_iter()
                .map(|(n, c)| (n, command_value(c)))
                .collect(),
        ),
    })
}

impl From<dc::MountSpec> for DevcontainerMount {
    fn from(m: dc::MountSpec) -> Self {
        DevcontainerMount {
            kind: m.kind.as_str().to_string(),
            source: m.source,
            target: m.target,
            readonly: m.readonly,
        }
    }
}

impl From<dc::RunArgs> for DevcontainerRunOptions {
    fn from(r: dc::RunArgs) -> Self {
        DevcontainerRunOptions {
            env: r.env.into_iter().collect(),
            labels: r.labels.into_iter().collect(),
            memory: r.memory,
            cpu_shares: r.cpu_shares,
            network: r.network,
            hostname: r.hostname,
            user: r.user,
            workdir: r.workdir,
            privileged: r.privileges.privileged,
            cap_add: r.privileges.cap_add,
            cap_drop: r.privileges.cap_drop,
            security_opt: r.privileges.security_opt,
            devices: r.privileges.devices,
            namespaces: r.privileges.namespaces.into_iter().collect(),
            mounts: r.mounts.into_iter().map(DevcontainerMount::from).collect(),
        }
    }
}

impl From<dc::DevcontainerConfig> for DevcontainerConfig {
    fn from(c: dc::DevcontainerConfig) -> Self {
        let path = |p: PathBuf| p.to_string_lossy().into_owned();
        DevcontainerConfig {
            config_path: path(c.config_path),
            name: c.name,
            image: c.image,
            build: c.build.map(|b| DevcontainerBuild {
                dockerfile: path(b.dockerfile),
                context: path(b.context),
                args: b.args.into_iter().collect(),
                target: b.target,
            }),
            container_env: c.container_env.into_iter().collect(),
            remote_env: c.remote_env.into_iter().collect(),
            mounts: c.mounts.into_iter().map(DevcontainerMount::from).collect(),
            workspace_folder: c.workspace_folder,
            workspace_mount: c.workspace_mount.map(DevcontainerMount::from),
            container_user: c.container_user,
            remote_user: c.remote_user,
            run_args: c.run_args_text,
            run_options: c.run_args.into(),
            privileged: c.privileged,
            cap_add: c.cap_add,
            security_opt: c.security_opt,
            initialize_command: lifecycle_value(c.initialize_command),
            on_create_command: lifecycle_value(c.on_create_command),
            update_content_command: lifecycle_value(c.update_content_command),
            post_create_command: lifecycle_value(c.post_create_command),
            post_start_command: lifecycle_value(c.post_start_command),
            post_attach_command: lifecycle_value(c.post_attach_command),
            features: c
                .features
                .into_iter()
                .map(DevcontainerFeature::from)
                .collect(),
            override_feature_install_order: c.override_feature_install_order,
            warnings: c.warnings,
        }
    }
}

/// The project's devcontainer.json (JSONC; variables substituted), or `undefined` when it has
/// none: `.devcontainer/devcontainer.json`, else `.devcontainer.json`, else
/// `.devcontainer/<folder>/devcontainer.json` when exactly one folder has one. An invalid
/// file rejects with DEVCONTAINER naming the file, line and column; a missing project
/// directory with ENOENT.
#[napi(ts_return_type = "Promise<DevcontainerConfig | undefined>")]
pub async fn read_devcontainer_config(
    project_dir: String,
) -> Outcome<Either<DevcontainerConfig, Undefined>> {
    blocking(move || dc::read_devcontainer_config(&PathBuf::from(project_dir)))
        .await
        .map(|c| match c {
            Some(c) => Either::A(DevcontainerConfig::from(c)),
            None => Either::B(()),
        })
        .into()
}
