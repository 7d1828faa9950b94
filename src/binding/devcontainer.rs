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

/// devcontainer.json's `build` (or the older top-level `dockerFile`/`context`).
#[napi(object)]
pub struct DevcontainerBuild {
    /// Absolute path of the Dockerfile.
    pub dockerfile: String,
    /// Absolute path of the build context; default the Dockerfile's folder.
    pub context: String,
    /// Build arguments (`--build-arg`).
    pub args: HashMap<String, String>,
    /// The stage to build (`--target`).
    pub target: Option<String>,
}

/// A mount of devcontainer.json (`mounts`, `workspaceMount`, `runArgs`), read as `docker
/// run --mount` reads it.
#[napi(object)]
pub struct DevcontainerMount {
    /// `volume` when the entry names no type.
    #[napi(js_name = "type", ts_type = "'bind' | 'volume' | 'tmpfs'")]
    pub kind: String,
    /// A host path (bind), a volume's name (empty: anonymous), empty (tmpfs).
    pub source: String,
    /// Absolute container path.
    pub target: String,
    /// Whether the mount is read-only.
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
    /// `--platform`: `os/arch[/variant]` of the image the container is made from.
    pub platform: Option<String>,
    /// `--privileged`.
    pub privileged: bool,
    /// `--cap-add`, `--cap-drop`.
    pub cap_add: Vec<String>,
    /// `--cap-drop`.
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
    /// `local`: a folder in the project; `oci`: an artifact fetched from a registry;
    /// `unsupported`: a deprecated form, in `warnings`, which a session refuses.
    #[napi(ts_type = "'local' | 'oci' | 'unsupported'")]
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
            dc::FeatureSource::Unsupported { .. } => ("unsupported", None),
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
    /// Absolute path of the devcontainer.json read.
    pub config_path: String,
    /// `name`.
    pub name: Option<String>,
    /// `image`.
    pub image: Option<String>,
    /// `build`, paths resolved against the file's folder.
    pub build: Option<DevcontainerBuild>,
    /// `containerEnv`: the container's environment.
    pub container_env: HashMap<String, String>,
    /// `remoteEnv`: added to the environment of commands and tools run in the container.
    pub remote_env: HashMap<String, String>,
    /// `remoteEnv` entries set to null: unset for tools and lifecycle commands.
    pub remote_env_unset: Vec<String>,
    /// `mounts`.
    pub mounts: Vec<DevcontainerMount>,
    /// Where the project is in the container; `/workspace` when the file does not say.
    pub workspace_folder: String,
    /// `workspaceMount`: how the project is mounted, when the file says.
    pub workspace_mount: Option<DevcontainerMount>,
    /// `containerUser`: the user of the container's processes.
    pub container_user: Option<String>,
    /// `remoteUser`: the user lifecycle commands and tools run as.
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
    /// `initializeCommand`: runs on the host; `Workspaces` needs `trust.hostCommands`.
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub initialize_command: Option<Value>,
    /// `onCreateCommand`: runs once per container, after it is created.
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub on_create_command: Option<Value>,
    /// `updateContentCommand`: runs once per container, after `onCreateCommand`.
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub update_content_command: Option<Value>,
    /// `postCreateCommand`: runs once per container, after `updateContentCommand`.
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub post_create_command: Option<Value>,
    /// `postStartCommand`: runs on every start of the container.
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub post_start_command: Option<Value>,
    /// `postAttachCommand`: for each time a tool attaches to the container.
    #[napi(ts_type = "string | string[] | Record<string, string | string[]>")]
    pub post_attach_command: Option<Value>,
    /// `dockerComposeFile`, always as a list, as written: a compose config is read, never run
    /// (`Workspaces.create` refuses it).
    pub docker_compose_file: Option<Vec<String>>,
    /// `service` of a compose config.
    pub service: Option<String>,
    /// `runServices` of a compose config.
    pub run_services: Option<Vec<String>>,
    /// `init`: whether an init process reaps the container's zombies (default true).
    pub init: Option<bool>,
    /// `overrideCommand`: false runs the image's own command, which must keep running.
    pub override_command: Option<bool>,
    /// `shutdownAction`: `none` keeps the container through an idle stop.
    #[napi(ts_type = "'none' | 'stopContainer' | 'stopCompose'")]
    pub shutdown_action: Option<String>,
    /// `updateRemoteUserUID`: make the clone writable by the remote user (default true).
    #[napi(js_name = "updateRemoteUserUID")]
    pub update_remote_user_uid: Option<bool>,
    /// `userEnvProbe`: the shell whose environment commands start from.
    #[napi(ts_type = "'none' | 'loginShell' | 'loginInteractiveShell' | 'interactiveShell'")]
    pub user_env_probe: Option<String>,
    /// `waitFor`: read; `Workspaces.create` waits for every lifecycle step.
    #[napi(
        ts_type = "'initializeCommand' | 'onCreateCommand' | 'updateContentCommand' | 'postCreateCommand' | 'postStartCommand'"
    )]
    pub wait_for: Option<String>,
    /// `features`, without the ones set to `false`.
    pub features: Vec<DevcontainerFeature>,
    /// `overrideFeatureInstallOrder`: feature ids installed first, in this order.
    pub override_feature_install_order: Vec<String>,
    /// `forwardPorts` then `appPort`: what a session serves on the host (through
    /// `forwardPort`, on 127.0.0.1).
    pub ports: Vec<DevcontainerPort>,
    /// `hostRequirements`, when the file has them.
    pub host_requirements: Option<DevcontainerHostRequirements>,
    /// What the file asks for that is not acted on (a compose config, a port of another
    /// container, an unknown property, …), one sentence each.
    pub warnings: Vec<String>,
}

/// devcontainer.json's `hostRequirements`, sizes in bytes. A session compares `cpus` and
/// `memory` with its limits (else the engine's capacity) and warns when they do not fit;
/// `storage` and `gpu` are neither checked nor provided (a warning says so).
#[napi(object)]
pub struct DevcontainerHostRequirements {
    /// Least CPUs.
    pub cpus: Option<u32>,
    /// Least memory, in bytes (`"4gb"` is 4 × 2^30).
    pub memory: Option<f64>,
    /// Least storage, in bytes.
    pub storage: Option<f64>,
    /// As written (`false` is left out).
    #[napi(ts_type = "boolean | 'optional' | { cores?: number; memory?: string }")]
    pub gpu: Option<Value>,
}

/// A container port devcontainer.json asks to be served on the host.
#[napi(object)]
pub struct DevcontainerPort {
    /// The port in the container.
    pub container_port: u32,
    /// The host port `appPort` names; absent for `forwardPorts` (the same number where it
    /// is free, else any).
    pub host_port: Option<u32>,
    /// `forwardPorts` or `appPort`.
    pub field: String,
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
            platform: r.platform,
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
            remote_env_unset: c
                .remote_env
                .iter()
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| k.clone())
                .collect(),
            remote_env: c
                .remote_env
                .into_iter()
                .filter_map(|(k, v)| Some((k, v?)))
                .collect(),
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
            docker_compose_file: c.compose.as_ref().map(|c| c.files.clone()),
            service: c.compose.as_ref().and_then(|c| c.service.clone()),
            run_services: c.compose.map(|c| c.run_services),
            init: c.init,
            override_command: c.override_command,
            shutdown_action: c.shutdown_action,
            update_remote_user_uid: c.update_remote_user_uid,
            user_env_probe: c.user_env_probe,
            wait_for: c.wait_for,
            features: c
                .features
                .into_iter()
                .map(DevcontainerFeature::from)
                .collect(),
            override_feature_install_order: c.override_feature_install_order,
            ports: c
                .ports
                .into_iter()
                .map(|p| DevcontainerPort {
                    container_port: u32::from(p.container_port),
                    host_port: p.host_port.map(u32::from),
                    field: p.field,
                })
                .collect(),
            host_requirements: c.host_requirements.map(|r| DevcontainerHostRequirements {
                cpus: r.cpus.map(|n| n.min(u64::from(u32::MAX)) as u32),
                memory: r.memory.map(|n| n as f64),
                storage: r.storage.map(|n| n as f64),
                gpu: r.gpu,
            }),
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
