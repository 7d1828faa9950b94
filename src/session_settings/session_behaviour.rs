//! The devcontainer fields that shape how a session's container runs rather than what it
//! holds: `init`, `overrideCommand`, `shutdownAction`, `updateRemoteUserUID`,
//! `userEnvProbe`, `waitFor`, and the entrypoints image metadata names. Unset fields take
//! the devcontainer defaults through the accessors.

use serde::{Deserialize, Serialize};

use crate::devcontainer::DevcontainerConfig;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Behaviour {
    pub init: Option<bool>,
    pub override_command: Option<bool>,
    pub shutdown_action: Option<String>,
    pub update_remote_user_uid: Option<bool>,
    pub user_env_probe: Option<String>,
    pub wait_for: Option<String>,
    /// `entrypoint` of image metadata entries, in order.
    pub entrypoints: Vec<String>,
    /// A compose session service's `entrypoint` and `command`, run when the image's own
    /// command is (`overrideCommand` false, a compose config's default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_entrypoint: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_command: Option<Vec<String>>,
}

impl Behaviour {
    /// What devcontainer.json asks (`runArgs --init` asks for an init as `init: true`
    /// does); image metadata is merged later.
    pub fn of(config: &DevcontainerConfig) -> Behaviour {
        let run_args_init = config.run_args_text.iter().any(|a| a == "--init");
        Behaviour {
            init: if run_args_init {
                Some(true)
            } else {
                config.init
            },
            override_command: config.override_command,
            shutdown_action: config.shutdown_action.clone(),
            update_remote_user_uid: config.update_remote_user_uid,
            user_env_probe: config.user_env_probe.clone(),
            wait_for: config.wait_for.clone(),
            entrypoints: Vec::new(),
            service_entrypoint: config.service_entrypoint.clone(),
            service_command: config.service_command.clone(),
        }
    }

    /// The engine's init runs as the container's first process (default true).
    pub fn init(&self) -> bool {
        self.init.unwrap_or(true)
    }

    /// Our keep-alive command replaces the image's command (default true).
    pub fn override_command(&self) -> bool {
        self.override_command.unwrap_or(true)
    }

    /// `none`: an idle stop leaves the container running.
    pub fn stops_when_idle(&self) -> bool {
        self.shutdown_action.as_deref() != Some("none")
    }

    pub fn update_remote_user_uid(&self) -> bool {
        self.update_remote_user_uid.unwrap_or(true)
    }

    pub fn user_env_probe(&self) -> &str {
        self.user_env_probe
            .as_deref()
            .unwrap_or("loginInteractiveShell")
    }

    pub fn wait_for(&self) -> &str {
        self.wait_for.as_deref().unwrap_or("updateContentCommand")
    }
}
