//! `WorkspaceTrust`: what a host allows a session's devcontainer.json to reach beyond the
//! session (nothing by default).

use std::path::PathBuf;

use napi_derive::napi;

use crate::session_settings::{Grant, Refusal, Trust};

/// What a session's devcontainer.json may reach beyond the session. Everything is refused
/// by default, with a `DEVCONTAINER` error naming the option that would allow it.
#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct WorkspaceTrust {
    /// Host paths (and what is under them) that bind mounts, `workspaceMount`, and the
    /// build's context and Dockerfile may use outside the session clone and the project.
    pub host_paths: Option<Vec<String>>,
    /// `privileged` and `--privileged`.
    pub privileged: Option<bool>,
    /// Capabilities `capAdd`/`--cap-add` may add, e.g. `['SYS_PTRACE']`; `['ALL']`: any.
    pub capabilities: Option<Vec<String>>,
    /// `securityOpt`/`--security-opt` other than `no-new-privileges`.
    pub security_options: Option<bool>,
    /// `--device`.
    pub devices: Option<bool>,
    /// The host's or another container's namespaces (`--network host`, `--pid host`, …),
    /// and bind mounts that propagate mounts with the host.
    pub host_namespaces: Option<bool>,
    /// A bind mount of an engine's socket, or of a directory holding one.
    pub engine_socket: Option<bool>,
    /// `initializeCommand`, which runs on the host, in the project directory.
    pub host_commands: Option<bool>,
    /// Host environment variables `${localEnv:NAME}` and a bare `runArgs -e NAME` may
    /// read; `['*']`: all.
    pub local_env: Option<Vec<String>>,
    /// Registries (`host[:port]`) devcontainer.json's OCI features, and the features they
    /// depend on, may be fetched from by the host, with the host's credentials for them;
    /// `['*']`: any.
    pub feature_registries: Option<Vec<String>>,
}

impl From<WorkspaceTrust> for Trust {
    fn from(t: WorkspaceTrust) -> Trust {
        Trust {
            host_paths: t
                .host_paths
                .unwrap_or_default()
                .into_iter()
                .map(PathBuf::from)
                .collect(),
            privileged: t.privileged.unwrap_or(false),
            capabilities: t.capabilities.unwrap_or_default(),
            security_options: t.security_options.unwrap_or(false),
            devices: t.devices.unwrap_or(false),
            host_namespaces: t.host_namespaces.unwrap_or(false),
            engine_socket: t.engine_socket.unwrap_or(false),
            host_commands: t.host_commands.unwrap_or(false),
            local_env: t.local_env.unwrap_or_default(),
            feature_registries: t.feature_registries.unwrap_or_default(),
        }
    }
}

/// The constructor's trust, with the older `allowHostCommands` spelling folded in.
pub fn host_trust(trust: Option<WorkspaceTrust>, allow_host_commands: Option<bool>) -> Trust {
    let trust = Trust::from(trust.unwrap_or_default());
    match allow_host_commands {
        Some(true) => trust.with_host_commands_of_old(),
        _ => trust,
    }
}

/// One thing a devcontainer.json asks beyond the session that the host's `trust` has not
/// granted. A `DEVCONTAINER` rejection of `Workspaces.create` carries them as its
/// `refusals` property (absent for other `DEVCONTAINER` errors), so a host can ask its
/// user and create again with the grants merged into `trust`.
#[napi(object, object_from_js = false)]
pub struct DevcontainerRefusal {
    /// The config field that asks, e.g. `capAdd`, `runArgs`, `mounts[0]`,
    /// `image metadata[1].privileged`.
    pub field: String,
    /// What it asks for, in words.
    pub what: String,
    /// The trust option that allows it, as the message writes it: `capabilities: ["SYS_PTRACE"]`.
    pub allow: String,
    /// The same option as a `trust` fragment: `{ capabilities: ['SYS_PTRACE'] }`,
    /// `{ privileged: true }`, `{ hostPaths: ['/data'] }`.
    #[napi(ts_type = "WorkspaceTrust")]
    pub trust: serde_json::Value,
}

impl From<&Refusal> for DevcontainerRefusal {
    fn from(r: &Refusal) -> DevcontainerRefusal {
        let value = match &r.grant {
            Grant::Flag(_) => serde_json::Value::Bool(true),
            Grant::List(_, items) => items.clone().into(),
        };
        let mut trust = serde_json::Map::new();
        trust.insert(r.grant.option().to_string(), value);
        DevcontainerRefusal {
            field: r.field.clone(),
            what: r.what.clone(),
            allow: r.allow.clone(),
            trust: trust.into(),
        }
    }
}
