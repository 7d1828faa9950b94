//! devcontainer.json (the parts a session container needs): JSONC, lookup, variables,
//! lifecycle commands and a safe subset of `runArgs`.

mod config;
mod jsonc;
mod lifecycle;
mod lookup;
mod run_args;
mod variables;

pub use config::{
    devcontainer_id, read_devcontainer_config, BuildConfig, DevcontainerConfig, MountSpec,
    DEFAULT_WORKSPACE_FOLDER,
};
pub use lifecycle::{Command, LifecycleCommand};
pub use run_args::RunArgs;
